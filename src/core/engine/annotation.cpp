#include "kscope/annotation.hpp"

#include <exception>

#include "core/engine/run_recorder.hpp"

namespace kscope {

Annotation::Annotation(std::string name) {
  if (auto* recorder = detail::active_recorder()) {
    region_ = recorder->open(name);
    run_ = recorder->run_serial();
    active_ = true;
  }
}

Annotation::~Annotation() {
  if (!active_) return;
  if (auto* recorder = detail::active_recorder()) recorder->close(region_, run_);
}

void Annotation::mark_failed(const std::string& reason) {
  if (!active_) return;
  if (auto* recorder = detail::active_recorder()) recorder->mark_failed(region_, run_, reason);
}

namespace detail {

void AnnotationAccess::abandon(Annotation& annotation, const std::string& why) noexcept {
  if (!annotation.active_) return;
  annotation.active_ = false;
  if (auto* recorder = active_recorder()) recorder->abandon(annotation.region_, annotation.run_, why);
}

}  // namespace detail

void annotate(const std::string& name, const std::function<void()>& fn, AnnotateOptions options) {
  Annotation region(name);
  if (!options.ignore_failures) {
    fn();
    return;
  }
  try {
    fn();
  } catch (const std::exception& e) {
    region.mark_failed(e.what());
  } catch (...) {
    region.mark_failed("a non-standard exception");
  }
}

}  // namespace kscope

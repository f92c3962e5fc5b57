#pragma once
// Marks the code whose kernels are measured. Outside a profile() session an annotation does
// nothing, so annotated code runs unchanged in production.
#include <cstddef>
#include <functional>
#include <string>

namespace kscope {

namespace detail {
class AnnotationAccess;
}

// The measured region of a profiled body, as a scope: every kernel launched between its
// construction and its destruction, from any thread, belongs to it. Outside profile() it does nothing.
class Annotation {
 public:
  // Opens the region. Throws AnnotationUseError if another region is open (no nesting) or the name
  // was already used in this run; the body may catch it and go on.
  explicit Annotation(std::string name);
  ~Annotation();  // closes the region
  Annotation(const Annotation&) = delete;
  Annotation& operator=(const Annotation&) = delete;

  // Records this run of the region as failed (NaN, excluded from NumRuns) instead of measured;
  // the reason is reported as a warning.
  void mark_failed(const std::string& reason = "");

 private:
  friend class detail::AnnotationAccess;
  std::size_t region_ = 0;
  std::size_t run_ = 0;  // the body call it was opened in: a region that outlives it closes nothing later
  bool active_ = false;
};

// The options of annotate().
struct AnnotateOptions {
  // An exception from the callable is swallowed and the run records NaN for this annotation.
  bool ignore_failures = false;
};

// Callable form: runs fn inside an Annotation named `name`.
void annotate(const std::string& name, const std::function<void()>& fn, AnnotateOptions options = {});

}  // namespace kscope

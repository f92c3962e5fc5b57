#include "backends/pcsampling/sass_lifecycle.hpp"

#include <exception>

#include "kscope/errors.hpp"

namespace kscope::pcsampling {

SassConfigurations& SassConfigurations::process() {
  static auto* configurations = new SassConfigurations;  // never destroyed: CUPTI keeps the configurations
  return *configurations;
}

void SassConfigurations::configure(int device, const std::function<void()>& set) {
  std::lock_guard lock(mutex_);
  auto known = failures_.find(device);
  if (known == failures_.end()) {
    std::string failure;
    try {
      set();
    } catch (const std::exception& e) {
      failure = e.what();
      if (failure.empty()) failure = "the SASS metrics could not be configured";
    }
    known = failures_.emplace(device, std::move(failure)).first;
  }
  if (!known->second.empty()) throw BackendError(known->second);
}

SassRange::SassRange(SassCalls& calls) : calls_(calls) { calls_.enable(); }

SassRange::~SassRange() {
  if (!enabled_) return;
  enabled_ = false;
  try {
    calls_.disable();
  } catch (...) {  // destroyed by an error already on its way, or unread: nothing of it is kept
  }
}

std::vector<SassCount> SassRange::finish() {
  if (!enabled_) throw InternalError("SassRange::finish called twice");
  std::vector<SassCount> counts;
  try {
    counts = calls_.read();
  } catch (...) {
    enabled_ = false;
    try {
      calls_.disable();
    } catch (...) {  // the read's error is the one said
    }
    throw;
  }
  enabled_ = false;
  calls_.disable();
  return counts;
}

}  // namespace kscope::pcsampling

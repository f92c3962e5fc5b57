#include "core/region_thread.hpp"

#include <utility>

#include "core/backend_choice.hpp"
#include "core/caller_language.hpp"

namespace kscope::detail {

void RegionThread::open() {
  owner_ = std::this_thread::get_id();
  foreign_.store(false, std::memory_order_relaxed);
  open_.store(true, std::memory_order_release);
}

void RegionThread::call_made(const char* call) noexcept {
  if (!open_.load(std::memory_order_acquire) || std::this_thread::get_id() == owner_) return;
  if (foreign_.exchange(true, std::memory_order_acq_rel)) return;
  try {
    std::lock_guard lock(mutex_);
    first_foreign_ = call ? call : "a launch";
  } catch (...) {  // the name is lost, not the refusal
  }
}

std::string RegionThread::close() {
  open_.store(false, std::memory_order_release);
  if (!foreign_.exchange(false, std::memory_order_acq_rel)) return {};
  std::string call;
  {
    std::lock_guard lock(mutex_);
    call = std::exchange(first_foreign_, {});
  }
  return "the events backend cannot time work launched from another thread (launch pattern 'another thread': " +
         call + " came from a thread other than the region's): its events span the host's time while that "
         "thread starts and launches, not the GPU's work alone. Use " +
         backend_choice(Backend::cupti) +
         ", which times each kernel on the GPU, or launch the region's work from the thread that opens it";
}

}  // namespace kscope::detail

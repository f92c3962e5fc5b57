#include "backends/counters/kept_profiler.hpp"

#include <mutex>

#include "backends/cupti_subscriber.hpp"

namespace kscope::counters {
namespace {

struct Kept {
  std::mutex mutex;
  std::unique_ptr<RangeProfiler> profiler;
};

// Never destroyed: at exit CUPTI and the driver release the profiler with the context.
Kept& kept() {
  static auto* k = new Kept;
  return *k;
}

// CUPTI frees a context's range profiler with the context: the kept one is let go without a call.
void forget_on(CUcontext context) noexcept {
  Kept& k = kept();
  std::lock_guard lock(k.mutex);
  if (k.profiler && k.profiler->context() == context) {
    k.profiler->forget();
    k.profiler.reset();
  }
}

}  // namespace

std::unique_ptr<RangeProfiler> take_kept_profiler(CUcontext context, const MetricConfig& config, RangeKind kind,
                                                  std::size_t ranges) {
  cupti::on_context_destroyed(&forget_on);
  Kept& k = kept();
  std::lock_guard lock(k.mutex);
  std::unique_ptr<RangeProfiler> profiler = std::move(k.profiler);
  if (profiler && profiler->context() == context && &profiler->config() == &config && profiler->kind() == kind &&
      profiler->max_ranges() >= ranges)
    return profiler;
  return nullptr;  // a kept one that does not fit is disabled here, before its successor is enabled
}

void keep_profiler(std::unique_ptr<RangeProfiler> profiler) noexcept {
  if (!profiler || !profiler->idle()) return;
  try {
    profiler->begin_batch(1);  // kept with a one-range image: a batch's may hold 256 MiB
  } catch (...) {
    return;  // poisoned and disabled: nothing to keep
  }
  Kept& k = kept();
  std::lock_guard lock(k.mutex);
  k.profiler = std::move(profiler);
}

void release_kept_profiler() noexcept {
  Kept& k = kept();
  std::unique_ptr<RangeProfiler> released;
  {
    std::lock_guard lock(k.mutex);
    released = std::move(k.profiler);
  }
}

}  // namespace kscope::counters

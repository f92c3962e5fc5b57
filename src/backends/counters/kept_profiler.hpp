#pragma once
// The counter backend's range profiler outlives its profile() call: the next call on the same
// context, with the same metric config and replay mode, takes it back and pays neither CUPTI's
// Enable nor a new profiler's first start again (docs/cost.md, "The counters backend's cost"). One
// is kept per process (CUPTI allows one per context). Whatever else needs the context's profiler,
// or CUPTI's activity records with their timestamps (which an enabled range profiler can zero),
// releases it first: the cupti backend's sessions and kscope doctor's probe. A context being destroyed takes it along.
#include <cuda.h>

#include <cstddef>
#include <memory>

#include "backends/counters/range_profiler.hpp"

namespace kscope::counters {

// The kept profiler when it is on `context`, for `config` and `kind`, with room for `ranges` per
// pass; otherwise null, and any kept one is disabled (a context holds one profiler at a time).
std::unique_ptr<RangeProfiler> take_kept_profiler(CUcontext context, const MetricConfig& config, RangeKind kind,
                                                  std::size_t ranges);

// Keeps `profiler` for the next call when it is idle (between batches, not poisoned); disables it
// otherwise.
void keep_profiler(std::unique_ptr<RangeProfiler> profiler) noexcept;

// Disables the kept profiler, if any.
void release_kept_profiler() noexcept;

}  // namespace kscope::counters

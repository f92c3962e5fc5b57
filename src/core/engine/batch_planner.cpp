#include "core/engine/batch_planner.hpp"

#include <algorithm>
#include <limits>

namespace kscope::detail {

BatchPlanner::BatchPlanner(const Settings& settings, std::size_t replay_passes)
    : first_batch_(replay_passes > 1 ? settings.warmup_runs + settings.adaptive.min_runs
                                     : std::max(settings.warmup_runs + settings.adaptive.min_runs, kOnePassFirstBatch)),
      adaptive_(settings.sampling == Sampling::adaptive),
      several_passes_(replay_passes > 1) {}

BatchPlanner::Batch BatchPlanner::next(std::size_t done, std::size_t limit, std::size_t backend_max) const {
  std::size_t runs = std::min(backend_max, limit - std::min(done, limit));
  if (adaptive_) runs = std::min(runs, std::max(first_batch_, 2 * done) - done);
  return {runs, several_passes_ ? std::numeric_limits<double>::infinity() : kMaxBatchSeconds};
}

}  // namespace kscope::detail

#pragma once
// How many runs the next batch of a config gets, and how long its first pass may keep taking runs.
// Pure logic, decided before every batch (the sampling plan decides after every run).
//   One pass per run (cupti, events, counters with a one-pass metric set): as many runs as the
//     backend takes, and pass 1 takes no more once the batch's oldest run is 20 ms old: a batch
//     then only shares a collection cost (the cupti backend's is ~0.3 ms), and the age bounds how
//     far the sweep runs past a time budget. Adaptive sampling: 64 runs (or the warm-ups and
//     min_runs, if more) first, then doubling, so at most about half the runs lie past the stop.
//   Several passes per run (counters): each batch pays every pass's fixed cost (CUPTI's start and
//     stop, ~10 ms a pass), so there is no age limit. Fixed sampling takes every run the config still
//     needs, up to the backend's limit (its memory bound); adaptive sampling starts with the
//     warm-ups and min_runs (no stop can come earlier), then doubles the config's runs each batch,
//     so at most about half of the runs measured lie past the stop and are dropped.
#include <cstddef>

#include "kscope/settings.hpp"

namespace kscope::detail {

class BatchPlanner {
 public:
  BatchPlanner(const Settings& settings, std::size_t replay_passes);

  struct Batch {
    std::size_t runs;  // at most this many runs
    double max_age_s;  // pass 1 takes no more runs once the batch's first run started this long ago
  };
  // `done`: the config's runs so far and `limit` the most it may take, warm-ups included;
  // `backend_max`: MeasurementBackend::max_batch_runs(). Zero runs when done == limit.
  Batch next(std::size_t done, std::size_t limit, std::size_t backend_max) const;

  static constexpr double kMaxBatchSeconds = 0.02;
  static constexpr std::size_t kOnePassFirstBatch = 64;

 private:
  std::size_t first_batch_;  // adaptive: the first batch, then the runs so far double each batch
  bool adaptive_;
  bool several_passes_;
};

}  // namespace kscope::detail

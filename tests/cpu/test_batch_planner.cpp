// How many runs each batch of a config gets: one-pass backends as the cupti backend always batched
// them, several passes (the counter backend) without the age limit, adaptive sampling in doubling
// batches. Pure logic.
#include <gtest/gtest.h>

#include <cmath>

#include "core/engine/batch_planner.hpp"

using kscope::Sampling;
using kscope::Settings;
using kscope::detail::BatchPlanner;

namespace {

Settings fixed(std::size_t runs, std::size_t warmups = 1) {
  Settings s;
  s.runs = runs;
  s.warmup_runs = warmups;
  return s;
}

Settings adaptive(std::size_t min_runs, std::size_t warmups = 1) {
  Settings s = fixed(10, warmups);
  s.sampling = Sampling::adaptive;
  s.adaptive.min_runs = min_runs;
  return s;
}

// The batches a config of `limit` runs (warm-ups included) gets when every batch is as planned.
std::vector<std::size_t> batches(const BatchPlanner& planner, std::size_t limit, std::size_t backend_max) {
  std::vector<std::size_t> out;
  for (std::size_t done = 0; done < limit;) {
    const std::size_t runs = planner.next(done, limit, backend_max).runs;
    if (runs == 0) break;
    out.push_back(runs);
    done += runs;
  }
  return out;
}

}  // namespace

TEST(BatchPlanner, OnePassBackendsBatchAsTheCuptiBackendAlwaysDid) {
  // As many runs as the backend takes, pass 1 ending 20 ms after the batch's first run started.
  for (const Settings& s : {fixed(150), adaptive(10)}) {
    const BatchPlanner planner(s, 1);
    const auto first = planner.next(0, 151, 64);
    EXPECT_EQ(first.runs, 64u);
    EXPECT_DOUBLE_EQ(first.max_age_s, 0.02);
    EXPECT_EQ(planner.next(128, 151, 64).runs, 23u);
    EXPECT_EQ(planner.next(151, 151, 64).runs, 0u);
    EXPECT_EQ(planner.next(3, 151, 1).runs, 1u);
  }
  EXPECT_DOUBLE_EQ(BatchPlanner(fixed(5), 0).next(0, 6, 64).max_age_s, 0.02);  // no counters at all
}

TEST(BatchPlanner, AdaptiveSamplingWithOnePassStartsAt64RunsThenDoubles) {
  // At most about half the runs measured lie past an adaptive stop, however large the backend's batches.
  const BatchPlanner planner(adaptive(10), 1);
  EXPECT_EQ(batches(planner, 1 + 1000, 1024), (std::vector<std::size_t>{64, 64, 128, 256, 489}));
  EXPECT_DOUBLE_EQ(planner.next(64, 1001, 1024).max_age_s, 0.02);
  // More warm-ups and min_runs than 64: all of them first.
  EXPECT_EQ(BatchPlanner(adaptive(100, 2), 1).next(0, 1000, 1024).runs, 102u);
  // Fixed sampling: every run the config needs, up to the backend's limit.
  EXPECT_EQ(batches(BatchPlanner(fixed(1000), 1), 1 + 1000, 1024), (std::vector<std::size_t>{1001}));
}

TEST(BatchPlanner, SeveralPassesTakeEveryRunTheConfigNeedsUpToTheBackendsLimit) {
  const BatchPlanner planner(fixed(50), 8);
  const auto batch = planner.next(0, 51, 135);
  EXPECT_EQ(batch.runs, 51u);
  EXPECT_TRUE(std::isinf(batch.max_age_s));
  // A backend that holds fewer (the counter data image's memory bound): several batches.
  EXPECT_EQ(batches(planner, 201, 64), (std::vector<std::size_t>{64, 64, 64, 9}));
  // A batch cut short (the backend found no room) leaves the rest to the next ones.
  EXPECT_EQ(planner.next(7, 51, 135).runs, 44u);
}

TEST(BatchPlanner, AdaptiveSamplingWithSeveralPassesStartsAtMinRunsThenDoubles) {
  const BatchPlanner planner(adaptive(10), 8);
  EXPECT_EQ(batches(planner, 1 + 1000, 512), (std::vector<std::size_t>{11, 11, 22, 44, 88, 176, 352, 297}));
  // The backend's limit still holds.
  EXPECT_EQ(batches(planner, 1 + 200, 40), (std::vector<std::size_t>{11, 11, 22, 40, 40, 40, 37}));
  // No warm-ups: min_runs first.
  EXPECT_EQ(BatchPlanner(adaptive(5, 0), 2).next(0, 100, 512).runs, 5u);
  // A first batch cut short: the next one still reaches min_runs before doubling.
  EXPECT_EQ(planner.next(3, 1001, 512).runs, 8u);
  EXPECT_TRUE(std::isinf(planner.next(0, 1001, 512).max_age_s));
}

// The simulated backend's noise (kscope/simulated_noise.hpp): each part does what it says, the clock
// readings show the clock the durations followed, and a seed gives the same timings every time.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <string>
#include <vector>

#include "kscope/annotation.hpp"
#include "kscope/errors.hpp"
#include "kscope/profile.hpp"
#include "kscope/statistics.hpp"
#include "kscope/testing.hpp"
#include "test_support.hpp"

using namespace kscope;
using kscope::testing::KernelNoise;
using kscope::testing::NoiseModel;
using kscope::testing::SimulatedBackend;
using kscope::testing::SimulatedNoise;
using kscope_test::error_of;

namespace {

// `n` launches of kernel `name` (100 us), one run each.
std::vector<double> launches(NoiseModel& model, std::size_t n, const std::string& name = "k") {
  std::vector<double> out;
  for (std::size_t i = 0; i < n; ++i) {
    model.run_started();
    out.push_back(model.launch(name, 100000, 0));
  }
  return out;
}

struct Sample {
  double duration, sm_clock;
};

// A profile of one kernel of 100 us on a simulated GPU with this noise: each run's duration and clock.
std::vector<Sample> profiled(const SimulatedNoise& noise, std::size_t runs) {
  SimulatedBackend sim;
  sim.set_noise(noise);
  const Results r = profile_with_backend(Sweep().axis("n", {1}), kscope_test::quiet(runs), [&](const Config&) {
    Annotation a("k");
    sim.launch("k", 100000);
  }, sim);
  std::vector<Sample> out;
  for (const SampleRow& s : r.samples()) out.push_back({s.value, s.sm_clock_mhz});
  return out;
}

}  // namespace

TEST(SimulatedNoise, JitterSpreadsTheDurationsByAboutItsPercentage) {
  SimulatedNoise noise;
  noise.kernel.jitter_pct = 2;
  NoiseModel model(noise, 1980);
  const SampleStatistics s = summarize(launches(model, 4000), 2);
  EXPECT_NEAR(s.rsd_pct, 2, 0.15);
  EXPECT_NEAR(s.median, 100000, 200);
}

TEST(SimulatedNoise, OutliersHitTheirShareOfLaunchesByTheirFactor) {
  SimulatedNoise noise;
  noise.kernel.outlier_rate = 0.05;
  noise.kernel.outlier_factor = 1.8;
  NoiseModel model(noise, 1980);
  const std::vector<double> d = launches(model, 4000);
  const auto outliers = std::count(d.begin(), d.end(), 180000.0);
  EXPECT_EQ(outliers + std::count(d.begin(), d.end(), 100000.0), 4000);
  EXPECT_NEAR(static_cast<double>(outliers) / 4000, 0.05, 0.012);
}

TEST(SimulatedNoise, EachKernelHasItsOwnNoise) {
  SimulatedNoise noise;
  noise.per_kernel["noisy"] = KernelNoise{5, 0, 1.5, 1};
  NoiseModel model(noise, 1980);
  const std::vector<double> quiet = launches(model, 100, "quiet");
  EXPECT_EQ(std::set<double>(quiet.begin(), quiet.end()).size(), 1u);
  EXPECT_GT(summarize(launches(model, 500, "noisy"), 2).rsd_pct, 4);
}

TEST(SimulatedNoise, DriftFollowsTheSimulatedTime) {
  SimulatedNoise noise;
  noise.drift_pct = 3;
  noise.drift_period_s = 0.1;
  noise.run_overhead_s = 0;
  NoiseModel model(noise, 1980);
  const std::vector<double> d = launches(model, 2000);  // 0.2 s of 100 us launches: two periods
  const auto [low, high] = std::minmax_element(d.begin(), d.end());
  EXPECT_NEAR(*low, 97000, 100);
  EXPECT_NEAR(*high, 103000, 100);
  EXPECT_NEAR(model.now_s(), 0.2, 0.01);
}

TEST(SimulatedNoise, TheClockReadingsShowTheDropsThatStretchTheComputeBoundTime) {
  SimulatedNoise noise;
  noise.seed = 4;
  noise.clock_drops_per_s = 20;
  noise.clock_drop_s = 0.005;
  const std::vector<Sample> compute_bound = profiled(noise, 400);
  std::set<double> clocks;
  for (const Sample& s : compute_bound) {
    clocks.insert(s.sm_clock);
    // A run that started and ended at one clock took exactly the cycles of 100 us at 1980 MHz.
    if (s.sm_clock == 1755) {
      EXPECT_DOUBLE_EQ(s.duration, 100000.0 * 1980 / 1755);
    } else if (s.sm_clock == 1980) {
      EXPECT_DOUBLE_EQ(s.duration, 100000);
    }
  }
  EXPECT_TRUE(clocks.count(1980) && clocks.count(1755)) << clocks.size();
  noise.kernel.clock_bound = 0;  // memory-bound: the time stays
  for (const Sample& s : profiled(noise, 400)) EXPECT_DOUBLE_EQ(s.duration, 100000);
}

TEST(SimulatedNoise, TheSameSeedGivesTheSameTimingsAndAnotherSeedOthers) {
  SimulatedNoise noise;
  noise.kernel = {2, 0.02, 1.5, 0.7};
  noise.drift_pct = 1;
  noise.clock_drops_per_s = 10;
  noise.seed = 9;
  const auto a = profiled(noise, 200), b = profiled(noise, 200);
  noise.seed = 10;
  const auto c = profiled(noise, 200);
  const auto durations = [](const std::vector<Sample>& v) {
    std::vector<double> out;
    for (const Sample& s : v) out.push_back(s.duration);
    return out;
  };
  EXPECT_EQ(durations(a), durations(b));
  EXPECT_NE(durations(a), durations(c));
}

TEST(SimulatedNoise, AFieldOutOfRangeIsRefusedByName) {
  SimulatedBackend sim;
  SimulatedNoise noise;
  noise.kernel.outlier_rate = 2;
  EXPECT_EQ(error_of([&] { sim.set_noise(noise); }),
            "the simulated noise's outlier_rate is 2: it takes a share from 0 to 1");
  noise = {};
  noise.per_kernel["k1"].clock_bound = -1;
  EXPECT_EQ(error_of([&] { sim.set_noise(noise); }),
            "the simulated noise's per_kernel['k1'].clock_bound is -1: it takes a share from 0 (memory-bound) to 1 "
            "(compute-bound)");
  noise = {};
  noise.drift_period_s = 0;
  EXPECT_EQ(error_of([&] { sim.set_noise(noise); }), "the simulated noise's drift_period_s is 0: it takes a positive time");
}

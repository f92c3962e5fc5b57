// The attribution rules on a real GPU: regions without kernels or with several, combining,
// ignoring, kernels launched from another thread, and runs collected in batches.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <functional>
#include <string>
#include <thread>

#include "gpu_test_support.hpp"
#include "kscope/kscope.hpp"

namespace {

using kscope::Annotation;
using kscope::Config;

constexpr const char* kMetric = "cupti__kernel_duration";

kscope::Sweep one_config() {
  kscope::Sweep sweep;
  sweep.axis("case", {kscope::Value("only")});
  return sweep;
}

kscope::Settings quiet_settings() {
  kscope::Settings settings;
  settings.runs = 5;
  settings.cache_control = kscope::CacheControl::none;
  settings.verbosity = kscope::Verbosity::quiet;
  return settings;
}

// The AnnotationError a failing profile() carries as its cause; fails the test otherwise.
std::string annotation_error_of(const kscope::Settings& settings, const kscope::Body& body) {
  try {
    kscope::profile(one_config(), settings, body);
  } catch (const kscope::SweepError& e) {
    try {
      std::rethrow_exception(e.cause());
    } catch (const kscope::AnnotationError& cause) {
      return cause.what();
    } catch (const std::exception& other) {
      ADD_FAILURE() << "SweepError's cause is not an AnnotationError: " << other.what();
      return {};
    }
  }
  ADD_FAILURE() << "profile() did not throw SweepError";
  return {};
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(CuptiAttribution, RegionWithoutKernelNamesTheRegion) {
  KSCOPE_REQUIRE_GPU();
  const std::string message =
      annotation_error_of(quiet_settings(), [](const Config&) { Annotation region("idle_region"); });
  std::printf("[info] no-kernel error: %s\n", message.c_str());
  EXPECT_TRUE(contains(message, "idle_region")) << message;
}

TEST(CuptiAttribution, TwoKernelsWithoutCombineListsThem) {
  KSCOPE_REQUIRE_GPU();
  const std::string message = annotation_error_of(quiet_settings(), [](const Config&) {
    Annotation region("pair");
    kscope_test::launch_spin(5'000);
    kscope_test::launch_empty();
  });
  std::printf("[info] two-kernel error: %s\n", message.c_str());
  EXPECT_TRUE(contains(message, kscope_test::kSpinKernel)) << message;
  EXPECT_TRUE(contains(message, kscope_test::kEmptyKernel)) << message;
}

TEST(CuptiAttribution, CombineAddsTheKernelsOfARegion) {
  KSCOPE_REQUIRE_GPU();
  auto settings = quiet_settings();
  settings.combine_kernel_metrics = std::plus<double>();
  const auto results = kscope::profile(one_config(), settings, [](const Config&) {
    Annotation region("pair");
    kscope_test::launch_spin(20'000);
    kscope_test::launch_spin(30'000);
  });
  const auto& row = results.at("pair", kMetric, 0);
  std::printf("[result] combined 20 us + 30 us spins: %.3f us (%s)\n", row.stats.median / 1e3,
              row.kernel.c_str());
  EXPECT_NEAR(row.stats.median / 50'000, 1.0, 0.03);
}

TEST(CuptiAttribution, IgnoredKernelIsDropped) {
  KSCOPE_REQUIRE_GPU();
  auto settings = quiet_settings();
  settings.ignore_kernel_list = {kscope_test::kEmptyKernel};
  const auto results = kscope::profile(one_config(), settings, [](const Config&) {
    Annotation region("spin_and_marker");
    kscope_test::launch_empty();
    kscope_test::launch_spin(20'000);
  });
  const auto& row = results.at("spin_and_marker", kMetric, 0);
  std::printf("[result] spin 20 us with an ignored empty kernel: %.3f us (%s)\n",
              row.stats.median / 1e3, row.kernel.c_str());
  EXPECT_EQ(row.kernel, kscope_test::kSpinKernel);
  EXPECT_NEAR(row.stats.median / 20'000, 1.0, 0.03);
}

TEST(CuptiAttribution, KernelLaunchedFromAnotherThreadBelongsToTheOpenRegion) {
  KSCOPE_REQUIRE_GPU();
  const auto results = kscope::profile(one_config(), quiet_settings(), [](const Config&) {
    Annotation region("threaded");
    std::thread worker([] { kscope_test::launch_spin(30'000); });
    worker.join();
  });
  const auto& row = results.at("threaded", kMetric, 0);
  std::printf("[result] spin 30 us launched from a std::thread: %.3f us (%s)\n",
              row.stats.median / 1e3, row.kernel.c_str());
  EXPECT_EQ(row.kernel, kscope_test::kSpinKernel);
  EXPECT_NEAR(row.stats.median / 30'000, 1.0, 0.03);
}

// The cupti backend collects runs in batches (kRunsPerCollection, 64): each run's kernels must
// reach that run. Every call spins 1 us longer than the one before, so consecutive samples differ
// by 1 us, and a sample read from a neighbouring run shows as a step of 0 or 2 us.
TEST(CuptiAttribution, RunsCollectedInBatchesKeepTheirOwnKernels) {
  KSCOPE_REQUIRE_GPU();
  auto settings = quiet_settings();
  settings.runs = 150;  // three batches
  settings.warmup_runs = 1;
  std::uint64_t call = 0;
  const auto results = kscope::profile(one_config(), settings, [&](const Config&) {
    Annotation region("growing_spin");
    kscope_test::launch_spin(20'000 + 1'000 * ++call);
  });
  const auto& samples = results.samples();
  ASSERT_EQ(samples.size(), 150u);
  EXPECT_NEAR(samples.front().value / 22'000, 1.0, 0.03);  // run 1 is call 2
  std::size_t wrong_steps = 0;
  double smallest = 1e30, largest = 0;
  for (std::size_t i = 1; i < samples.size(); ++i) {
    const double step = samples[i].value - samples[i - 1].value;
    smallest = std::min(smallest, step);
    largest = std::max(largest, step);
    wrong_steps += std::abs(step - 1'000) > 500;
  }
  std::printf("[result] 150 runs in batches of 64, spins of 22..171 us: steps between runs %.0f..%.0f ns "
              "(1000 expected), %zu wrong\n", smallest, largest, wrong_steps);
  EXPECT_EQ(wrong_steps, 0u);
}

// A run whose body throws inside a batch: the runs ended before it are kept, its own kernels are
// dropped, and none of them leaks into the next session.
TEST(CuptiAttribution, AFailedRunInABatchKeepsTheEarlierRunsAndLeavesNothingBehind) {
  KSCOPE_REQUIRE_GPU();
  auto settings = quiet_settings();
  settings.runs = 10;
  settings.warmup_runs = 1;
  int call = 0;
  try {
    kscope::profile(one_config(), settings, [&](const Config&) {
      Annotation region("spin");
      kscope_test::launch_spin(10'000 * ++call);
      if (call == 6) throw std::runtime_error("failure after a launch");
    });
    ADD_FAILURE() << "profile() did not throw";
  } catch (const kscope::SweepError& e) {
    const auto& samples = e.partial_results().samples();
    ASSERT_EQ(samples.size(), 4u) << e.what();  // runs 1-4 (calls 2-5)
    for (std::size_t i = 0; i < samples.size(); ++i)
      EXPECT_NEAR(samples[i].value / (10'000.0 * static_cast<double>(i + 2)), 1.0, 0.03) << "run " << i + 1;
  }
  const auto next = kscope::profile(one_config(), quiet_settings(), [](const Config&) {
    Annotation region("after");
    kscope_test::launch_spin(30'000);
  });
  const auto& row = next.at("after", kMetric, 0);
  std::printf("[result] after a failed batched run: next session %zu samples, median %.3f us\n",
              row.stats.count, row.stats.median / 1e3);
  EXPECT_EQ(row.stats.count, 5u);
  EXPECT_NEAR(row.stats.max / 30'000, 1.0, 0.03);
}

}  // namespace

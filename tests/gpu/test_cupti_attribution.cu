// The attribution rules on a real GPU: regions without kernels or with several, combining,
// ignoring, kernels launched from another thread, and runs collected in batches.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <stdexcept>
#include <functional>
#include <string>
#include <thread>

#include "gpu_test_support.hpp"
#include "spin_bounds.hpp"
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
  std::printf("[result] combined 20 us + 30 us spins: %.3f us, excess %+.0f ns (%s)\n", row.stats.median / 1e3,
              row.stats.median - 50'000, row.kernel.c_str());
  // Two kernels, two fixed parts; either spin alone (20 or 30 us) is far outside.
  EXPECT_TRUE(kscope_test::spin_measured(row.stats.median, 50'000, kscope_test::kCupti, 2));
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
  std::printf("[result] spin 20 us with an ignored empty kernel: %.3f us, excess %+.0f ns (%s)\n",
              row.stats.median / 1e3, row.stats.median - 20'000, row.kernel.c_str());
  EXPECT_EQ(row.kernel, kscope_test::kSpinKernel);
  EXPECT_TRUE(kscope_test::spin_measured(row.stats.median, 20'000));
}

TEST(CuptiAttribution, KernelLaunchedFromAnotherThreadBelongsToTheOpenRegion) {
  KSCOPE_REQUIRE_GPU();
  const auto results = kscope::profile(one_config(), quiet_settings(), [](const Config&) {
    Annotation region("threaded");
    std::thread worker([] { kscope_test::launch_spin(30'000); });
    worker.join();
  });
  const auto& row = results.at("threaded", kMetric, 0);
  std::printf("[result] spin 30 us launched from a std::thread: %.3f us, excess %+.0f ns (%s)\n",
              row.stats.median / 1e3, row.stats.median - 30'000, row.kernel.c_str());
  EXPECT_EQ(row.kernel, kscope_test::kSpinKernel);
  EXPECT_TRUE(kscope_test::spin_measured(row.stats.median, 30'000));
}

// The cupti backend collects runs in batches (CuptiBackend::kMaxBatchRuns, 1024, or 20 ms of runs):
// each run's kernels must reach that run. Every call spins 5 us longer than the one before, more
// than a sample's whole window (a 2 us tick below, a 2 us fixed part above: spin_bounds.hpp), in a
// cycle of 50 spins (20..265 us), so each sample is checked against its own call's spin and a sample
// read from a neighbouring run cannot pass. 1100 runs cross the 1024-run limit as well as the 20 ms one.
TEST(CuptiAttribution, RunsCollectedInBatchesKeepTheirOwnKernels) {
  KSCOPE_REQUIRE_GPU();
  constexpr double kFirstNs = 20'000, kStepNs = 5'000;
  constexpr std::uint64_t kSpins = 50;
  constexpr std::size_t kRuns = 1100;
  const auto spin_of_call = [](std::uint64_t call) {
    return kFirstNs + kStepNs * static_cast<double>((call - 1) % kSpins);
  };
  auto settings = quiet_settings();
  settings.runs = kRuns;
  settings.warmup_runs = 1;
  std::uint64_t call = 0;
  const auto results = kscope::profile(one_config(), settings, [&](const Config&) {
    Annotation region("cycling_spin");
    kscope_test::launch_spin(static_cast<std::uint64_t>(spin_of_call(++call)));
  });
  const auto& samples = results.samples();
  ASSERT_EQ(samples.size(), kRuns);
  std::size_t wrong = 0;
  double smallest = 1e30, largest = -1e30;
  for (std::size_t run = 0; run < samples.size(); ++run) {
    const double spin = spin_of_call(run + 2);  // run 0 is call 2: call 1 was the warm-up
    smallest = std::min(smallest, samples[run].value - spin);
    largest = std::max(largest, samples[run].value - spin);
    const auto in_bounds = kscope_test::spin_measured(samples[run].value, spin);
    if (!in_bounds && ++wrong <= 3) ADD_FAILURE() << "run " << run << ": " << in_bounds.message();
  }
  std::printf("[result] %zu runs in batches of up to 1024 or 20 ms, spins of 20..265 us in 5 us steps, "
              "repeating: excess over each run's own spin %+.0f..%+.0f ns, %zu runs outside its bounds\n",
              kRuns, smallest, largest, wrong);
  EXPECT_EQ(wrong, 0u);
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
    // Neighbouring calls' spins are 10 us apart: a sample from another run falls outside.
    for (std::size_t i = 0; i < samples.size(); ++i)
      EXPECT_TRUE(kscope_test::spin_measured(samples[i].value, 10'000.0 * static_cast<double>(i + 2)))
          << "run " << i + 1;
  }
  const auto next = kscope::profile(one_config(), quiet_settings(), [](const Config&) {
    Annotation region("after");
    kscope_test::launch_spin(30'000);
  });
  const auto& row = next.at("after", kMetric, 0);
  std::printf("[result] after a failed batched run: next session %zu samples, %.3f..%.3f us\n",
              row.stats.count, row.stats.min / 1e3, row.stats.max / 1e3);
  EXPECT_EQ(row.stats.count, 5u);
  // The failed run's 60 us spin, had it leaked into this session, would show in a sample.
  EXPECT_TRUE(kscope_test::spin_measured(row.stats.min, 30'000));
  EXPECT_TRUE(kscope_test::spin_measured(row.stats.max, 30'000));
}

}  // namespace

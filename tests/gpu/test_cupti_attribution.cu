// The attribution rules on a real GPU: regions without kernels or with several, combining,
// ignoring, and kernels launched from another thread.
#include <gtest/gtest.h>

#include <cstdio>
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

}  // namespace

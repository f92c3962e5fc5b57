// A separate executable, so that CUDA is certainly initialised and has run a kernel before kscope
// first touches CUPTI in this process (late attach), and two sessions then follow each other.
#include <gtest/gtest.h>

#include <cstdio>

#include "gpu_test_support.hpp"
#include "spin_bounds.hpp"
#include "kscope/kscope.hpp"

namespace {

double measure_spin_ns(kscope::Backend backend, std::uint64_t spin_ns) {
  kscope::Settings settings;
  settings.backend = backend;
  settings.runs = 10;
  settings.cache_control = kscope::CacheControl::none;
  settings.verbosity = kscope::Verbosity::quiet;
  kscope::Sweep sweep;
  sweep.axis("spin_ns", {kscope::Value(static_cast<long long>(spin_ns))});
  const auto results = kscope::profile(sweep, settings, [spin_ns](const kscope::Config&) {
    kscope::Annotation region("spin");
    kscope_test::launch_spin(spin_ns);
  });
  return results.rows().at(0).stats.median;
}

TEST(LateAttach, CudaInitialisedBeforeTheSessionAndTwoSessionsInOneProcess) {
  KSCOPE_REQUIRE_GPU();
  kscope_test::check(cudaFree(nullptr), "cudaFree(0)");
  kscope_test::launch_spin(5'000);
  kscope_test::check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  // Before this process's first session (a profiler run earlier may have raised the rate for good).
  const auto tick = static_cast<double>(kscope_test::globaltimer_tick_ns());

  const double first = measure_spin_ns(kscope::Backend::cupti, 40'000);
  const double between = measure_spin_ns(kscope::Backend::events, 40'000);
  const double second = measure_spin_ns(kscope::Backend::cupti, 40'000);
  std::printf("[result] late attach: cupti session 1 %.3f us, events %.3f us, cupti session 2 "
              "%.3f us (spin 40 us); %%globaltimer tick %.0f ns before the first session\n",
              first / 1e3, between / 1e3, second / 1e3, tick);
  EXPECT_TRUE(kscope_test::spin_measured(first, 40'000));
  EXPECT_TRUE(kscope_test::spin_measured(second, 40'000));
  EXPECT_TRUE(kscope_test::spin_measured(between, 40'000, kscope_test::kEvents));
  EXPECT_LE(tick, kscope_test::kGlobalTimerTickNs) << "raise kGlobalTimerTickNs in spin_bounds.hpp";
}

}  // namespace

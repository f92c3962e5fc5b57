// Does the cupti backend measure what the hardware does? A memory-bound copy against the
// device's copy bandwidth, a kernel of known length, and cold against warm L2.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <vector>

#include "gpu_test_support.hpp"
#include "kscope/kscope.hpp"

namespace {

using kscope::Annotation;
using kscope::Config;

double median_ns(const kscope::Results& results, const std::string& annotation,
                 std::size_t config = 0) {
  const std::string metric = results.rows().at(0).metric;
  return results.at(annotation, metric, config).stats.median;
}

kscope::Settings quiet_settings(kscope::Backend backend, kscope::CacheControl cache) {
  kscope::Settings settings;
  settings.backend = backend;
  settings.cache_control = cache;
  settings.runs = 20;
  settings.verbosity = kscope::Verbosity::quiet;
  return settings;
}

TEST(CuptiTiming, CopyDurationGrowsWithSizeAndReachesCopyBandwidth) {
  KSCOPE_REQUIRE_GPU();
  constexpr int kMinLog2 = 16, kMaxLog2 = 26;
  kscope_test::DeviceFloats in(std::size_t(1) << kMaxLog2), out(std::size_t(1) << kMaxLog2);
  const double copy_gbps = kscope_test::copy_bandwidth_gbps(std::size_t(1) << 30);

  std::vector<kscope::Value> sizes;
  for (int p = kMinLog2; p <= kMaxLog2; ++p) sizes.emplace_back(1LL << p);
  kscope::Sweep sweep;
  sweep.axis("n", sizes);
  const auto copy = [&](const Config& config) {
    const auto n = static_cast<std::size_t>(config.get<std::int64_t>("n"));
    Annotation region("copy");
    kscope_test::launch_copy(in.get(), out.get(), n);
  };
  const auto results = kscope::profile(
      sweep, quiet_settings(kscope::Backend::cupti, kscope::CacheControl::all), copy);

  std::printf("[result] memcpy D2D 1 GiB: %.0f GB/s (read + write)\n", copy_gbps);
  std::printf("%12s %14s %12s\n", "n (floats)", "median (us)", "GB/s");
  std::vector<double> medians;
  for (std::size_t c = 0; c < sizes.size(); ++c) {
    const double n = static_cast<double>(sizes[c].as_int());
    medians.push_back(median_ns(results, "copy", c));
    std::printf("%12.0f %14.3f %12.0f\n", n, medians.back() / 1e3, 8 * n / medians.back());
  }
  const double kernel_gbps = 8.0 * static_cast<double>(1LL << kMaxLog2) / medians.back();
  std::printf("[result] copy kernel 2^26 floats: %.0f GB/s = %.3f x memcpy\n", kernel_gbps,
              kernel_gbps / copy_gbps);
  // For the record, not asserted: without the flush, the first kernel does not write back the
  // flush buffer's dirty L2 lines (at most one L2, 60 MB on an H200, against 512 MB moved).
  kscope::Sweep largest;
  largest.axis("n", {sizes.back()});
  const double warm_ns = median_ns(
      kscope::profile(largest, quiet_settings(kscope::Backend::cupti, kscope::CacheControl::none),
                      copy),
      "copy");
  std::printf("[result] copy kernel 2^26 floats without L2 flush: %.0f GB/s (flushed/unflushed "
              "duration %.3f)\n", 8.0 * static_cast<double>(1LL << kMaxLog2) / warm_ns,
              medians.back() / warm_ns);

  for (std::size_t c = 1; c < medians.size(); ++c) {
    // Small sizes sit on the launch floor, where noise may reorder neighbours slightly.
    EXPECT_GT(medians[c], 0.95 * medians[c - 1]) << "n = " << sizes[c].as_int();
  }
  EXPECT_GT(medians.back(), 20 * medians.front());
  EXPECT_NEAR(kernel_gbps / copy_gbps, 1.0, 0.15);
}

TEST(CuptiTiming, SpinKernelOfKnownLength) {
  KSCOPE_REQUIRE_GPU();
  constexpr double kSpinNs = 50'000;
  kscope::Sweep sweep;
  sweep.axis("spin_ns", {kscope::Value(50'000)});
  const auto body = [](const Config&) {
    Annotation region("spin");
    kscope_test::launch_spin(static_cast<std::uint64_t>(kSpinNs));
  };
  const double cupti = median_ns(
      kscope::profile(sweep, quiet_settings(kscope::Backend::cupti, kscope::CacheControl::none), body),
      "spin");
  const double events = median_ns(
      kscope::profile(sweep, quiet_settings(kscope::Backend::events, kscope::CacheControl::none), body),
      "spin");
  std::printf("[result] spin 50 us: cupti %.3f us (%+.2f%%), events %.3f us (%+.2f%%)\n",
              cupti / 1e3, 100 * (cupti / kSpinNs - 1), events / 1e3, 100 * (events / kSpinNs - 1));
  EXPECT_NEAR(cupti / kSpinNs, 1.0, 0.02);
  // Events bracket the launch as well as the kernel: the start event completes before the GPU
  // receives the kernel, so they read high by the launch latency (a few us), never low.
  EXPECT_GT(events, 0.99 * kSpinNs);
  EXPECT_LT(events, kSpinNs + 10'000);
}

TEST(CuptiTiming, ColdL2IsSlowerThanWarmForAnL2SizedWorkingSet) {
  KSCOPE_REQUIRE_GPU();
  constexpr std::size_t kFloats = (8u << 20) / sizeof(float);  // 8 MB, well under a 60 MB L2
  kscope_test::DeviceFloats data(kFloats), sink(1);
  kscope::Sweep sweep;
  sweep.axis("bytes", {kscope::Value(8 << 20)});
  const auto body = [&](const Config&) {
    Annotation region("read");
    kscope_test::launch_read(data.get(), kFloats, sink.get());
  };
  auto settings = quiet_settings(kscope::Backend::cupti, kscope::CacheControl::all);
  settings.runs = 30;
  const double cold = median_ns(kscope::profile(sweep, settings, body), "read");
  settings.cache_control = kscope::CacheControl::none;
  const double warm = median_ns(kscope::profile(sweep, settings, body), "read");
  std::printf("[result] 8 MB read: cold (cache_control=all) %.3f us, warm (none) %.3f us, "
              "cold/warm %.2f\n", cold / 1e3, warm / 1e3, cold / warm);
  EXPECT_LT(warm, 0.95 * cold);
}

}  // namespace

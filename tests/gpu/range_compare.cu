// One region of two kernels (a 512 MiB copy, then a 256 MiB read), for comparing the counters
// backend's replay_mode range with Nsight Compute's --replay-mode range on the same region
// (scripts/nsight_compat_check.sh drives it):
//   range_compare --measure     profiles the region with kscope (Backend::counters, range replay,
//                               cache_control all) and prints "KSCOPE <metric> <median> <unit> <kernel>"
//                               per metric;
//   range_compare --plain REPS  runs the region REPS times inside the NVTX range "pair", to run
//                               under ncu --nvtx --nvtx-include pair/ --replay-mode range.
// RANGE_COMPARE_PAIRS=N in the environment makes the region N copies of the pair (default 1): the
// difference between two sizes is the region's work without the range's fixed part.
#include <nvtx3/nvToolsExt.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "gpu_test_support.hpp"
#include "kscope/kscope.hpp"

namespace {

// Large enough that the region (~230 us) dwarfs the gap between its two kernels, which depends on
// how each tool submits them.
constexpr std::size_t kFloats = std::size_t(1) << 26;
constexpr const char* kMetrics[] = {"gpu__time_duration.sum", "dram__bytes_read.sum"};

int pairs() {
  const char* text = std::getenv("RANGE_COMPARE_PAIRS");
  return text ? std::max(1, std::atoi(text)) : 1;
}

void region(const kscope_test::DeviceFloats& in, kscope_test::DeviceFloats& out, kscope_test::DeviceFloats& sink) {
  for (int p = pairs(); p > 0; --p) {
    kscope_test::launch_copy(in.get(), out.get(), kFloats);
    kscope_test::launch_read(out.get(), kFloats, sink.get());
  }
}

int measure(const kscope_test::DeviceFloats& in, kscope_test::DeviceFloats& out, kscope_test::DeviceFloats& sink) {
  kscope::Settings settings;
  settings.backend = kscope::Backend::counters;
  settings.metrics.assign(std::begin(kMetrics), std::end(kMetrics));
  settings.replay_mode = kscope::ReplayMode::range;
  settings.cache_control = kscope::CacheControl::all;
  settings.runs = 5;
  settings.verbosity = kscope::Verbosity::quiet;
  const auto results = kscope::profile(kscope::Sweep(), settings, [&](const kscope::Config&) {
    kscope::Annotation pair("pair");
    region(in, out, sink);
  });
  for (const char* metric : kMetrics) {
    const auto& row = results.at("pair", metric, 0);
    std::printf("KSCOPE %s %.1f %s %s\n", metric, row.stats.median, row.unit.c_str(), row.kernel.c_str());
  }
  return 0;
}

int plain(const kscope_test::DeviceFloats& in, kscope_test::DeviceFloats& out, kscope_test::DeviceFloats& sink,
          int reps) {
  for (int r = 0; r < reps; ++r) {
    nvtxRangePushA("pair");
    region(in, out, sink);
    nvtxRangePop();
  }
  kscope_test::check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const auto with_buffers = [](const auto& use) {
    kscope_test::DeviceFloats in(kFloats), out(kFloats), sink(1);
    return use(in, out, sink);
  };
  return kscope_test::measure_or_plain(
      argc, argv, [&] { return with_buffers([](auto& in, auto& out, auto& sink) { return measure(in, out, sink); }); },
      [&](int reps) { return with_buffers([&](auto& in, auto& out, auto& sink) { return plain(in, out, sink, reps); }); });
}

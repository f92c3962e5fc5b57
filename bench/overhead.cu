// Host wall time per measured region: a bare event-timed loop against kscope's events and cupti
// backends, on an empty kernel and on a 20 us kernel, with and without L2 flushing; then where
// kscope's time goes (the engine alone, and the NVML readings it takes around every run).
#include <chrono>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "device/cuda_device.hpp"
#include "device/nvml.hpp"
#include "gpu_test_support.hpp"
#include "kscope/kscope.hpp"
#include "kscope/testing.hpp"

namespace {

constexpr std::size_t kRegions = 2000;

using Clock = std::chrono::steady_clock;

double us_since(Clock::time_point start, std::size_t count) {
  return std::chrono::duration<double, std::micro>(Clock::now() - start).count() /
         static_cast<double>(count);
}

// (a) What a careful hand-written timing loop costs: events around each launch, a sync each time.
double bare_loop_us(const std::function<void()>& launch) {
  kscope_test::Event start, stop;
  const auto iteration = [&] {
    kscope_test::check(cudaEventRecord(start.get()), "cudaEventRecord");
    launch();
    kscope_test::check(cudaEventRecord(stop.get()), "cudaEventRecord");
    kscope_test::check(cudaEventSynchronize(stop.get()), "cudaEventSynchronize");
  };
  iteration();
  const auto t0 = Clock::now();
  for (std::size_t i = 0; i < kRegions; ++i) iteration();
  return us_since(t0, kRegions);
}

// (b), (c): one config of kRegions runs, one region each; the whole profile() call is counted.
double kscope_us(kscope::Backend backend, kscope::CacheControl cache,
                 const std::function<void()>& launch) {
  kscope::Settings settings;
  settings.backend = backend;
  settings.cache_control = cache;
  settings.runs = kRegions;
  settings.warmup_runs = 1;
  settings.verbosity = kscope::Verbosity::quiet;
  kscope::Sweep sweep;
  sweep.axis("case", {kscope::Value("overhead")});
  const auto t0 = Clock::now();
  kscope::profile(sweep, settings, [&](const kscope::Config&) {
    kscope::Annotation region("region");
    launch();
  });
  return us_since(t0, kRegions);
}

// The engine alone: the same profile() on the simulated backend, which touches no GPU.
double engine_us() {
  kscope::testing::SimulatedBackend backend;
  kscope::Settings settings;
  settings.runs = kRegions;
  settings.cache_control = kscope::CacheControl::none;
  settings.verbosity = kscope::Verbosity::quiet;
  kscope::Sweep sweep;
  sweep.axis("case", {kscope::Value("overhead")});
  const auto t0 = Clock::now();
  kscope::profile_with_backend(sweep, settings, [&](const kscope::Config&) {
    kscope::Annotation region("region");
    backend.launch("kernel", 1000);
  }, backend);
  return us_since(t0, kRegions);
}

template <typename Read>
double call_us(Read read) {
  read();
  const auto t0 = Clock::now();
  for (std::size_t i = 0; i < kRegions; ++i) read();
  return us_since(t0, kRegions);
}

void print_breakdown() {
  const kscope::device::NvmlApi& api = kscope::device::nvml();
  const std::string uuid = kscope::device::query_cuda_device(-1).uuid;
  kscope::device::NvmlDeviceControl control(api, uuid);
  std::printf("where kscope's time per region goes:\n");
  std::printf("  engine alone (simulated backend)          %8.2f us\n", engine_us());
  std::printf("  NVML clocks() (SM, memory, reasons)       %8.2f us  (read twice a run)\n",
              call_us([&] { control.clocks(); }));
  // The thermal guard reads it at most every 100 ms (ThermalGuard::kCheckIntervalSeconds).
  std::printf("  NVML thermal_margin_c()                   %8.2f us  (at most every 100 ms, thermal guard on)\n",
              call_us([&] { control.thermal_margin_c(); }));
}

}  // namespace

int main() {
  if (kscope_test::report_no_gpu()) return 2;
  try {
    const std::vector<std::pair<std::string, std::function<void()>>> kernels = {
        {"empty", [] { kscope_test::launch_empty(); }},
        {"spin 20us", [] { kscope_test::launch_spin(20'000); }},
    };
    // One untimed session per backend first: CUPTI's subscription and kernel instrumentation and
    // the flush buffer's allocation are one-time costs, not per-region ones.
    for (auto backend : {kscope::Backend::events, kscope::Backend::cupti}) {
      kscope_us(backend, kscope::CacheControl::all, kernels[0].second);
    }
    std::printf("host wall time per region, %zu regions each; ratio = / bare loop\n", kRegions);
    std::printf("%-10s %-6s %10s %10s %7s %10s %7s\n", "kernel", "cache", "bare us", "events us",
                "ratio", "cupti us", "ratio");
    for (const auto& [name, launch] : kernels) {
      const double bare = bare_loop_us(launch);
      for (auto cache : {kscope::CacheControl::none, kscope::CacheControl::all}) {
        const double events = kscope_us(kscope::Backend::events, cache, launch);
        const double cupti = kscope_us(kscope::Backend::cupti, cache, launch);
        std::printf("%-10s %-6s %10.2f %10.2f %7.2f %10.2f %7.2f\n", name.c_str(),
                    kscope::to_string(cache).c_str(), bare, events, events / bare, cupti,
                    cupti / bare);
      }
    }
    std::printf("(cache=all includes kscope's L2 flush, a 60 MB memset and an L2 discard on an H200; "
                "the bare loop never flushes)\n");
    print_breakdown();
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "overhead: %s\n", e.what());
    return 1;
  }
}

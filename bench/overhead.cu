// Host wall time per measured region: a bare event-timed loop against kscope's events and cupti
// backends, on an empty kernel and on a 20 us kernel, with and without L2 flushing; then where
// kscope's time goes (the engine alone, and the NVML readings it takes around every run).
#include <chrono>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include <cupti.h>

#include <algorithm>

#include "backends/cupti/cupti_backend.hpp"
#include "device/cuda_device.hpp"
#include "device/l2_flush.hpp"
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

kscope::Settings call_settings(kscope::Backend backend, kscope::CacheControl cache, std::size_t runs) {
  kscope::Settings s;
  s.backend = backend;
  s.cache_control = cache;
  s.runs = runs;
  s.warmup_runs = 1;
  s.verbosity = kscope::Verbosity::quiet;
  return s;
}

double profile_ms(const kscope::Settings& settings, const std::function<void()>& launch) {
  kscope::Sweep sweep;
  sweep.axis("case", {kscope::Value("call")});
  const auto t0 = Clock::now();
  kscope::profile(sweep, settings, [&](const kscope::Config&) {
    kscope::Annotation region("region");
    launch();
  });
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

// (b), (c): one config of kRegions runs, one region each; the whole profile() call is counted.
double kscope_us(kscope::Backend backend, kscope::CacheControl cache, const std::function<void()>& launch) {
  return 1e3 * profile_ms(call_settings(backend, cache, kRegions), launch) / static_cast<double>(kRegions);
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


// --- issue 29: where a durations call's fixed cost goes, and a counters call's ----------------

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0.0 : v[v.size() / 2];
}

template <typename F>
double median_ms(int reps, F&& f) {
  f();  // warm
  std::vector<double> ms;
  for (int i = 0; i < reps; ++i) {
    const auto t0 = Clock::now();
    f();
    ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
  }
  return median_of(ms);
}

// GPU time per back-to-back repetition of `enqueue` (events around `reps` of them, no host sync).
double gpu_us(const std::function<void()>& enqueue, int reps = 500) {
  kscope_test::Event start, stop;
  enqueue();
  kscope_test::check(cudaEventRecord(start.get()), "cudaEventRecord");
  for (int i = 0; i < reps; ++i) enqueue();
  kscope_test::check(cudaEventRecord(stop.get()), "cudaEventRecord");
  kscope_test::check(cudaEventSynchronize(stop.get()), "cudaEventSynchronize");
  float ms = 0;
  kscope_test::check(cudaEventElapsedTime(&ms, start.get(), stop.get()), "cudaEventElapsedTime");
  return 1e3 * ms / reps;
}

int call_breakdown() {
  constexpr int kReps = 15;
  constexpr std::size_t kFloats = std::size_t(1) << 20;
  kscope_test::DeviceFloats in(kFloats), out(kFloats);
  const auto copy = [&] { kscope_test::launch_copy(in.get(), out.get(), kFloats); };
  using kscope::Backend;
  using kscope::CacheControl;
  const auto row = [](const char* what, double ms) { std::printf("CALL %-34s %9.3f ms\n", what, ms); };
  // The whole call, and its slope: fixed cost = wall(1 run) - 2 runs' worth (warm-up + run). The
  // events backend's slope is the engine's per-run cost without CUPTI.
  for (auto backend : {Backend::cupti, Backend::events}) {
    for (auto cache : {CacheControl::all, CacheControl::none}) {
      const double one = median_ms(kReps, [&] { profile_ms(call_settings(backend, cache, 1), copy); });
      const double many = median_ms(5, [&] { profile_ms(call_settings(backend, cache, 1000), copy); });
      const double per_run = (many - one) / 999.0;
      std::printf("CALL %-6s cache=%-4s runs=1 %.3f ms, runs=1000 %.3f ms: per run %.2f us, fixed %.3f ms\n",
                  kscope::to_string(backend).c_str(), kscope::to_string(cache).c_str(), one, many, 1e3 * per_run,
                  one - 2 * per_run);
    }
  }
  kscope::device::L2Flusher flusher(0);
  std::printf("GPU flush_us %.3f copy_2^20_us %.3f flush+copy_us %.3f   (back to back, events)\n",
              gpu_us([&] { flusher.flush(cudaStreamLegacy); }), gpu_us(copy), gpu_us([&] {
                flusher.flush(cudaStreamLegacy);
                copy();
              }));
  const auto host_us = [](const std::function<void()>& enqueue) {
    constexpr int kEnqueues = 200;
    kscope_test::check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
    const auto t0 = Clock::now();
    for (int i = 0; i < kEnqueues; ++i) enqueue();
    const double us = us_since(t0, kEnqueues);
    kscope_test::check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
    return us;
  };
  {  // host cost of enqueueing a flush: two calls (memset, discard kernel) or one graph launch
    std::printf("HOST flush enqueue: one by one %.2f us, graph %.2f us; GPU: one by one %.3f us, graph %.3f us\n",
                host_us([&] { flusher.enqueue(cudaStreamLegacy); }), host_us([&] { flusher.flush(cudaStreamLegacy); }),
                gpu_us([&] { flusher.enqueue(cudaStreamLegacy); }), gpu_us([&] { flusher.flush(cudaStreamLegacy); }));
  }
  {  // host cost of a kernel launch, and what CUPTI's kernel records add to it
    const auto flush_copy = [&] {
      flusher.flush(cudaStreamLegacy);
      copy();
    };
    const double plain = host_us(copy), plain_gpu = gpu_us(flush_copy);
    cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
    const double traced = host_us(copy), traced_gpu = gpu_us(flush_copy);
    cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
    cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    std::printf("HOST copy launch: plain %.2f us, with CUPTI kernel activity %.2f us; GPU flush+copy: plain %.3f us, "
                "traced %.3f us\n", plain, traced, plain_gpu, traced_gpu);
  }
  row("query_cuda_device", median_ms(kReps, [] { kscope::device::query_cuda_device(0); }));
  const std::string uuid = kscope::device::query_cuda_device(0).uuid;
  row("NvmlDeviceControl(uuid)",
      median_ms(kReps, [&] { kscope::device::NvmlDeviceControl control(kscope::device::nvml(), uuid); }));
  row("driver_version", median_ms(kReps, [] { kscope::device::driver_version(kscope::device::nvml()); }));
  row("host_name", median_ms(kReps, [] { kscope::device::host_name(); }));
  row("L2Flusher make+free", median_ms(kReps, [] { kscope::device::L2Flusher l2(0); }));
  row("cudaDeviceSynchronize idle", median_ms(kReps, [] { cudaDeviceSynchronize(); }));
  row("cuptiActivityEnable+Disable", median_ms(kReps, [] {
        cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
        cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
      }));
  row("cuptiActivityFlushAll(0)", median_ms(kReps, [] { cuptiActivityFlushAll(0); }));
  row("cuptiActivityFlushAll(FORCED)", median_ms(kReps, [] { cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED); }));
  {
    kscope::device::NvmlDeviceControl control(kscope::device::nvml(), uuid);
    row("NVML clocks()", median_ms(kReps, [&] { control.clocks(); }));
    row("NVML thermal_margin_c()", median_ms(kReps, [&] { control.thermal_margin_c(); }));
  }
  const kscope::Settings settings = call_settings(Backend::cupti, CacheControl::all, 1);
  row("CuptiBackend construct+destroy", median_ms(kReps, [] { kscope::CuptiBackend b(0); }));
  row("CuptiBackend + session", median_ms(kReps, [&] {
        kscope::CuptiBackend b(0);
        b.begin_session(settings);
        b.end_session();
      }));
  {
    kscope::CuptiBackend b(0);
    row("  begin_session+end_session", median_ms(kReps, [&] {
          b.begin_session(settings);
          b.end_session();
        }));
    row("  describe()", median_ms(kReps, [&] { b.describe(); }));
    b.begin_session(settings);
    const std::string name = "region";
    const std::vector<kscope::RegionRecord> regions{{name, false, ""}};
    row("  one run + collect", median_ms(kReps, [&] {
          kscope::RunContext run;
          b.begin_batch(1);
          b.begin_run(run);
          b.flush_cache();
          b.region_begin({run, 0, name});
          copy();
          b.region_end({run, 0, name});
          b.end_run(run, regions);
          b.collect_batch();
        }));
    b.end_session();
  }
  return 0;
}

// What a range profiler kept between counters calls costs the program's own launches: an empty
// kernel launched and synchronised, before any counters call, after one (the profiler kept), and
// after a cupti call (which releases it).
int kept_profiler_effect() {
  const auto launch_us = [] {
    constexpr int kLaunches = 2000;
    kscope_test::launch_empty();
    kscope_test::check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
    const auto t0 = Clock::now();
    for (int i = 0; i < kLaunches; ++i) {
      kscope_test::launch_empty();
      kscope_test::check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
    }
    return us_since(t0, kLaunches);
  };
  const double before = launch_us();
  kscope::Settings counters = call_settings(kscope::Backend::counters, kscope::CacheControl::all, 1);
  counters.metrics = {"gpu__time_duration.sum"};
  profile_ms(counters, [] { kscope_test::launch_empty(); });
  const double kept = launch_us();
  profile_ms(call_settings(kscope::Backend::cupti, kscope::CacheControl::all, 1), [] { kscope_test::launch_empty(); });
  const double released = launch_us();
  std::printf("KEPT empty kernel launch + sync: %.2f us before any counters call, %.2f us with the profiler kept, "
              "%.2f us after a cupti call released it\n", before, kept, released);
  return 0;
}

// The first counters call of a process (one metric, one run, no warm-up), then later ones.
int counters_calls() {
  constexpr std::size_t kFloats = std::size_t(1) << 22;
  kscope_test::DeviceFloats in(kFloats), out(kFloats);
  const auto copy = [&] { kscope_test::launch_copy(in.get(), out.get(), kFloats); };
  kscope::Settings s = call_settings(kscope::Backend::counters, kscope::CacheControl::all, 1);
  s.warmup_runs = 0;
  s.metrics = {"gpu__time_duration.sum"};
  std::printf("COUNTERS first %.1f ms\n", profile_ms(s, copy));
  std::printf("COUNTERS later");
  for (int i = 0; i < 5; ++i) std::printf(" %.1f", profile_ms(s, copy));
  std::printf(" ms\n");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (kscope_test::report_no_gpu()) return 2;
  const std::string mode = argc > 1 ? argv[1] : "";
  try {
    if (mode == "--call-breakdown") return call_breakdown();
    if (mode == "--counters-calls") return counters_calls();
    if (mode == "--kept-effect") return kept_profiler_effect();
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

// Where one run of the counter backend spends its time: the range profiler's calls timed one by
// one (CUPTI_AutoRange, CUPTI_UserReplay, one 16 MiB copy per pass), for a 1- and a 5-metric set,
// a counter data image sized for 512 ranges (kscope's limit) or for 16, and SetConfig called
// every run or only on the first. The values of both SetConfig policies are printed, so a policy
// that gives wrong numbers shows. scripts/gpu_check.sh runs it; it needs counter permission.
//   STAGE <metrics> <ranges> <setconfig> <image bytes> <passes> begin start launch stop sync decode total (ms)
//   VALUE <metrics> <ranges> <setconfig> <metric> <median over runs>
#include <algorithm>
#include <chrono>
#include <stdexcept>
#include <cstdio>
#include <string>
#include <vector>

#include "backends/counters/driver_api.hpp"
#include "backends/counters/profiler_host.hpp"
#include "backends/counters/range_profiler.hpp"
#include "gpu_test_support.hpp"

namespace {

using Clock = std::chrono::steady_clock;
namespace counters = kscope::counters;

constexpr std::size_t kFloats = std::size_t(1) << 22;  // 16 MiB, as counters_overhead's per-kernel case
constexpr int kWarmupRuns = 2;
constexpr int kRuns = 15;

const std::vector<std::vector<std::string>> kSets{
    {"gpu__time_duration.sum"},
    {"gpu__time_duration.sum", "dram__bytes_read.sum", "sm__throughput.avg.pct_of_peak_sustained_elapsed",
     "dram__throughput.avg.pct_of_peak_sustained_elapsed", "lts__t_sector_hit_rate.pct"},
};

enum Stage { begin, start, launch, stop, sync, decode, total, stage_count };
const char* const kStageNames[] = {"begin", "start", "launch", "stop", "sync", "decode", "total"};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

struct Case {
  const std::vector<std::string>* metrics;
  std::size_t ranges;
  bool set_config_every_run;
};

void run_case(const Case& c, const std::string& chip, CUcontext context, const std::vector<std::uint8_t>& availability,
              const float* in, float* out) {
  const counters::MetricConfig config(chip, *c.metrics, availability);
  counters::RangeProfiler profiler(context, config, counters::RangeKind::per_kernel, c.ranges);
  std::vector<std::vector<double>> ms(stage_count);
  std::vector<std::vector<double>> values(c.metrics->size());
  std::size_t passes = 0;
  for (int run = 0; run < kWarmupRuns + kRuns; ++run) {
    double t[stage_count] = {};
    const auto run_start = Clock::now();
    auto mark = Clock::now();
    const auto lap = [&](Stage s) {
      const auto now = Clock::now();
      t[s] += std::chrono::duration<double, std::milli>(now - mark).count();
      mark = now;
    };
    profiler.begin_run(c.set_config_every_run);
    lap(begin);
    passes = 0;
    for (bool more = true; more; ++passes) {
      profiler.start();
      lap(start);
      kscope_test::launch_copy(in, out, kFloats);
      lap(launch);
      more = !profiler.stop();
      lap(stop);
    }
    kscope_test::check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
    lap(sync);
    const auto ranges = profiler.decode();
    lap(decode);
    t[total] = std::chrono::duration<double, std::milli>(Clock::now() - run_start).count();
    if (run < kWarmupRuns) continue;
    for (int s = 0; s < stage_count; ++s) ms[s].push_back(t[s]);
    if (ranges.size() != 1) throw std::runtime_error("expected 1 range, got " + std::to_string(ranges.size()));
    for (std::size_t m = 0; m < values.size(); ++m) values[m].push_back(ranges[0].values.at(m));
  }
  const char* policy = c.set_config_every_run ? "every" : "once";
  std::printf("STAGE %zu %zu %s %zu %zu", c.metrics->size(), c.ranges, policy, profiler.counter_data_bytes(), passes);
  for (int s = 0; s < stage_count; ++s) std::printf(" %.3f", median(ms[s]));
  std::printf("\n");
  for (std::size_t m = 0; m < values.size(); ++m)
    std::printf("VALUE %zu %zu %s %s %.6g\n", c.metrics->size(), c.ranges, policy, (*c.metrics)[m].c_str(),
                median(values[m]));
}

}  // namespace

int main() {
  if (const std::string reason = kscope_test::no_gpu_reason(); !reason.empty()) {
    std::fprintf(stderr, "no CUDA device: %s\n", reason.c_str());
    return 2;
  }
  try {
    kscope_test::DeviceFloats in(kFloats), out(kFloats);
    const CUcontext context = counters::current_context();
    const std::string chip = counters::chip_of_device(0);
    const auto availability = counters::counter_availability(context);
    std::printf("STAGE metrics ranges setconfig image_bytes passes");
    for (const char* name : kStageNames) std::printf(" %s", name);
    std::printf("   (ms, median of %d runs, %s)\n", kRuns, chip.c_str());
    for (const auto& metrics : kSets)
      for (std::size_t ranges : {std::size_t(512), std::size_t(16)})
        for (bool every : {true, false}) run_case({&metrics, ranges, every}, chip, context, availability, in.get(), out.get());
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "counters_stages: %s\n", e.what());
    return 1;
  }
}

// Where the counter backend spends its wall time, call by call, on one 16 MiB copy per run (the
// per-kernel case of counters_overhead), for a 1- and a 5-metric (8-pass) set:
//   FIRST     the process's first counter run through CountersBackend, call by call: the fixed
//             cost of a first result (the range profiler's first start is in begin_run);
//   BACKEND   CountersBackend driven through the MeasurementBackend interface as the session
//             drives it, pass-major, in batches of 1 run (as before issue 14) and of 50 (cache_control
//             all: a flush before the region of every run in every pass), with or without an NVML
//             read before each run of pass 1;
//   RUNNER    kscope::profile's session around CountersBackend, each kind of backend call timed,
//             with the thermal guard on or off: per run, the slope from 50 to 150 runs;
//   PROFILER  the range profiler alone (CUPTI_AutoRange, CUPTI_UserReplay), one run per batch, with
//             a counter data image for 512 or 16 ranges, with or without the L2 flush before each
//             pass: start and stop are CUPTI's fixed cost per pass.
//   BATCH     the range profiler alone, pass-major over 50 runs in one start/stop per pass, the L2
//             flushed before every run inside the pass: per kernel (AutoRange, the flush's kernels
//             are ranges too) against one user range around each run's kernel (UserRange, the
//             flush outside every range). What a range costs, and whether the copy kernel's values
//             agree between the two kinds.
// scripts/gpu_check.sh runs it (`counters_stages batch`: the BATCH rows alone); it needs counter permission. Times in ms:
//   FIRST construct begin_session begin_batch begin_run flush region_begin launch region_end end_run
//         another_pass collect end_session total
//   BACKEND <metrics> <nvml> <batch runs> <passes> nvml begin_batch begin_run flush region_begin launch
//           region_end end_run another_pass collect total   (per run: the median batch / its runs)
//   RUNNER <metrics> <thermal> <passes> begin_batch begin_run flush region_begin region_end end_run
//          another_pass collect nvml body runner total   (body: its own time less the backend calls;
//          runner: the rest)
//   PROFILER <metrics> <ranges> <flush> <image bytes> <passes> begin flush start launch stop sync decode
//            total   (the median run)
//   BATCH <metrics> <kind> <runs> <ranges decoded> <passes> ms_per_run <median value per metric of
//         the copy's ranges>   (the median of kRuns batches)
#include <array>
#include <chrono>
#include <cstdio>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "backends/counters/batch_image.hpp"
#include "backends/counters/counters_backend.hpp"
#include "backends/counters/driver_api.hpp"
#include "backends/counters/profiler_host.hpp"
#include "backends/counters/range_profiler.hpp"
#include "device/l2_flush.hpp"
#include "gpu_test_support.hpp"
#include "kscope/kscope.hpp"

namespace {

using Clock = std::chrono::steady_clock;
namespace counters = kscope::counters;

constexpr std::size_t kFloats = std::size_t(1) << 22;
constexpr int kWarmupBatches = 2;
constexpr int kBatches = 8;
constexpr int kRuns = 15;  // PROFILER: measured runs

const std::vector<std::vector<std::string>> kSets{
    {"gpu__time_duration.sum"},
    {"gpu__time_duration.sum", "dram__bytes_read.sum", "sm__throughput.avg.pct_of_peak_sustained_elapsed",
     "dram__throughput.avg.pct_of_peak_sustained_elapsed", "lts__t_sector_hit_rate.pct"},
};

kscope::Settings counter_settings(const std::vector<std::string>& metrics) {
  kscope::Settings s;
  s.backend = kscope::Backend::counters;
  s.metrics = metrics;
  s.cache_control = kscope::CacheControl::all;
  s.verbosity = kscope::Verbosity::quiet;
  return s;
}

double ms_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

// Wall time per named stage, summed within a sample (a run, or a batch divided by its runs) and
// kept per sample.
class StageClock {
 public:
  explicit StageClock(std::vector<const char*> stages) : names_(std::move(stages)), ms_(names_.size() + 1) {}
  void start() {
    sample_.assign(names_.size(), 0.0);
    start_ = mark_ = Clock::now();
  }
  void lap(std::size_t stage) {
    const auto now = Clock::now();
    sample_[stage] += ms_between(mark_, now);
    mark_ = now;
  }
  // Keeps the sample, each stage divided by `runs`.
  void end(bool keep, std::size_t runs = 1) {
    if (!keep) return;
    for (std::size_t s = 0; s < sample_.size(); ++s) ms_[s].push_back(sample_[s] / static_cast<double>(runs));
    ms_.back().push_back(ms_between(start_, Clock::now()) / static_cast<double>(runs));
  }
  std::string medians() const {
    std::string out;
    char buf[32];
    for (const auto& v : ms_) {
      std::snprintf(buf, sizeof buf, " %.3f", kscope::summarize(v, 0).median);
      out += buf;
    }
    return out;
  }
  std::string header() const {
    std::string out;
    for (const char* n : names_) out += std::string(" ") + n;
    return out + " total";
  }

 private:
  std::vector<const char*> names_;
  std::vector<std::vector<double>> ms_;
  std::vector<double> sample_;
  Clock::time_point start_, mark_;
};

// One region with one copy, through the backend interface, for the given run and pass.
template <class Lap>
void one_run(kscope::CountersBackend& backend, const kscope::RunContext& context, const float* in, float* out,
             Lap&& lap) {
  static const std::string name = "copy";
  static const std::vector<kscope::RegionRecord> regions{{name, false, ""}};
  backend.begin_run(context);
  lap("begin_run");
  backend.flush_cache();
  lap("flush");
  backend.region_begin({context, 0, name});
  lap("region_begin");
  kscope_test::launch_copy(in, out, kFloats);
  lap("launch");
  backend.region_end({context, 0, name});
  lap("region_end");
  backend.end_run(context, regions);
  lap("end_run");
}

// Must run first in the process: CUPTI's and the profiler's one-time costs are what it shows.
void first_case(const float* in, float* out) {
  const std::vector<const char*> stages{"construct",  "begin_session", "begin_batch", "begin_run",
                                        "flush",      "region_begin",  "launch",      "region_end",
                                        "end_run",    "another_pass",  "collect",     "end_session"};
  StageClock clock(stages);
  const auto stage = [&](const char* name) {
    for (std::size_t s = 0; s < stages.size(); ++s)
      if (std::string(stages[s]) == name) return s;
    throw std::logic_error(name);
  };
  const auto lap = [&](const char* name) { clock.lap(stage(name)); };
  const kscope::Settings settings = counter_settings(kSets[0]);
  clock.start();
  kscope::CountersBackend backend(settings);
  lap("construct");
  backend.begin_session(settings);
  lap("begin_session");
  backend.begin_batch(1);
  lap("begin_batch");
  kscope::RunContext context;
  for (bool more = true; more; ++context.pass) {
    one_run(backend, context, in, out, lap);
    more = backend.another_pass_needed();
    lap("another_pass");
  }
  if (backend.collect_batch().size() != 1) throw std::runtime_error("expected one collected run");
  lap("collect");
  backend.end_session();
  lap("end_session");
  clock.end(true);
  std::printf("FIRST%s   (ms, the process's first counter run, one metric)\n", clock.header().c_str());
  std::printf("FIRST%s\n", clock.medians().c_str());
}

// NVML read before each run of pass 1: none, the clocks (as the runner reads them), or the
// thermal margin (the runner's thermal guard reads it at most every 100 ms).
enum class Telemetry { none, clocks, margin };
const char* const kTelemetryNames[] = {"none", "clocks", "margin"};

void backend_case(const std::vector<std::string>& metrics, Telemetry telemetry, std::size_t batch_runs,
                  const float* in, float* out, bool print_header) {
  const std::vector<const char*> stages{"nvml",       "begin_batch", "begin_run",    "flush",
                                        "region_begin", "launch",    "region_end",   "end_run",
                                        "another_pass", "collect"};
  StageClock clock(stages);
  const auto lap = [&](const char* name) {
    for (std::size_t s = 0; s < stages.size(); ++s)
      if (std::string(stages[s]) == name) return clock.lap(s);
    throw std::logic_error(name);
  };
  if (print_header)
    std::printf("BACKEND metrics nvml batch_runs passes%s   (ms per run: the median of %d batches / its runs)\n",
                clock.header().c_str(), kBatches);
  const kscope::Settings settings = counter_settings(metrics);
  kscope::CountersBackend backend(settings);
  backend.begin_session(settings);
  for (int batch = 0; batch < kWarmupBatches + kBatches; ++batch) {
    clock.start();
    backend.begin_batch(batch_runs);
    lap("begin_batch");
    kscope::RunContext context;
    for (bool more = true; more; ++context.pass) {
      for (std::size_t k = 0; k < batch_runs; ++k) {
        if (context.pass == 1 && telemetry == Telemetry::clocks) backend.device_control()->clocks();
        if (context.pass == 1 && telemetry == Telemetry::margin) backend.device_control()->thermal_margin_c();
        lap("nvml");
        context.batch_index = k;
        context.run = static_cast<std::size_t>(batch) * batch_runs + k;
        one_run(backend, context, in, out, lap);
      }
      more = backend.another_pass_needed();
      lap("another_pass");
    }
    if (backend.collect_batch().size() != batch_runs) throw std::runtime_error("a batch lost runs");
    lap("collect");
    clock.end(batch >= kWarmupBatches, batch_runs);
  }
  backend.end_session();
  std::printf("BACKEND %zu %s %zu %zu%s\n", metrics.size(), kTelemetryNames[static_cast<int>(telemetry)], batch_runs,
              backend.passes(), clock.medians().c_str());
}

template <class F>
void add_ms(double& total, F&& f) {
  const auto t0 = Clock::now();
  f();
  total += ms_between(t0, Clock::now());
}

// The runner's calls into the backend and its NVML telemetry, each kind's wall time added up.
enum Call { c_begin_batch, c_begin_run, c_flush, c_region_begin, c_region_end, c_end_run, c_another_pass,
            c_collect, c_nvml, c_count };
const char* const kCallNames[] = {"begin_batch", "begin_run",    "flush",   "region_begin", "region_end",
                                  "end_run",     "another_pass", "collect", "nvml"};
using CallTimes = std::array<double, c_count>;

class TimedDeviceControl final : public kscope::DeviceControl {
 public:
  TimedDeviceControl(kscope::DeviceControl* inner, CallTimes& ms) : inner_(inner), ms_(ms) {}
  kscope::ClockReading clocks() override {
    kscope::ClockReading r;
    add_ms(ms_[c_nvml], [&] { r = inner_ ? inner_->clocks() : kscope::ClockReading{}; });
    return r;
  }
  std::optional<double> thermal_margin_c() override {
    std::optional<double> m;
    add_ms(ms_[c_nvml], [&] { m = inner_ ? inner_->thermal_margin_c() : std::nullopt; });
    return m;
  }
  kscope::ClockReading lock_base_clocks() override { throw std::runtime_error("not in this bench"); }
  void restore_clocks() noexcept override {}

 private:
  kscope::DeviceControl* inner_;
  CallTimes& ms_;
};

class TimedBackend final : public kscope::MeasurementBackend {
 public:
  explicit TimedBackend(kscope::MeasurementBackend& inner) : inner_(inner), device_(inner.device_control(), ms_) {}
  const CallTimes& ms() const { return ms_; }

  std::vector<kscope::MetricSpec> metrics() const override { return inner_.metrics(); }
  kscope::SessionInfo describe() const override { return inner_.describe(); }
  kscope::DeviceControl* device_control() override { return &device_; }
  void begin_session(const kscope::Settings& s) override { inner_.begin_session(s); }
  void end_session() noexcept override { inner_.end_session(); }
  std::size_t max_batch_runs() const override { return inner_.max_batch_runs(); }
  bool batch_has_room() const override { return inner_.batch_has_room(); }
  void begin_batch(std::size_t runs) override { add_ms(ms_[c_begin_batch], [&] { inner_.begin_batch(runs); }); }
  void begin_run(const kscope::RunContext& run) override { add_ms(ms_[c_begin_run], [&] { inner_.begin_run(run); }); }
  void flush_cache() override { add_ms(ms_[c_flush], [&] { inner_.flush_cache(); }); }
  void region_begin(const kscope::RegionContext& r) override {
    add_ms(ms_[c_region_begin], [&] { inner_.region_begin(r); });
  }
  void region_end(const kscope::RegionContext& r) override { add_ms(ms_[c_region_end], [&] { inner_.region_end(r); }); }
  void end_run(const kscope::RunContext& run, const std::vector<kscope::RegionRecord>& regions) override {
    add_ms(ms_[c_end_run], [&] { inner_.end_run(run, regions); });
  }
  bool another_pass_needed() override {
    bool more = false;
    add_ms(ms_[c_another_pass], [&] { more = inner_.another_pass_needed(); });
    return more;
  }
  std::vector<kscope::RunMeasurement> collect_batch() override {
    std::vector<kscope::RunMeasurement> m;
    add_ms(ms_[c_collect], [&] { m = inner_.collect_batch(); });
    return m;
  }
  void abandon_run(const kscope::RunContext& run) noexcept override { inner_.abandon_run(run); }

 private:
  kscope::MeasurementBackend& inner_;
  CallTimes ms_{};
  TimedDeviceControl device_;
};

// Per run: the difference between a profile() call of kRunnerRunsMany and one of kRunnerRunsFew
// runs, divided by the runs between, so setup, teardown and the first batch's costs cancel.
constexpr std::size_t kRunnerRunsFew = 50, kRunnerRunsMany = 150;

void runner_case(const std::vector<std::string>& metrics, kscope::ThermalMode thermal, const float* in, float* out,
                 bool print_header) {
  if (print_header) {
    std::printf("RUNNER metrics thermal passes");
    for (const char* n : kCallNames) std::printf(" %s", n);
    std::printf(" body runner total   (ms per run: slope from %zu to %zu runs; body: its own time, runner: the rest)\n",
                kRunnerRunsFew, kRunnerRunsMany);
  }
  struct Totals {
    CallTimes calls;
    double body_ms, total_ms;
  };
  std::size_t passes = 0;
  const auto measure = [&](std::size_t runs) {
    kscope::Settings settings = counter_settings(metrics);
    settings.runs = runs;
    settings.thermal_mode = thermal;
    kscope::CountersBackend counters(settings);
    TimedBackend backend(counters);
    const auto in_calls = [&] {
      double sum = 0;
      for (double v : backend.ms()) sum += v;
      return sum;
    };
    double body_ms = 0;  // the body's wall time less the backend calls made from it
    const auto start = Clock::now();
    kscope::profile_with_backend(kscope::Sweep().axis("case", {"copy"}), settings,
                                 [&](const kscope::Config&) {
                                   const auto t0 = Clock::now();
                                   const double calls0 = in_calls();
                                   {
                                     kscope::Annotation region("copy");
                                     kscope_test::launch_copy(in, out, kFloats);
                                   }
                                   body_ms += ms_between(t0, Clock::now()) - (in_calls() - calls0);
                                 },
                                 backend);
    passes = counters.passes();
    return Totals{backend.ms(), body_ms, ms_between(start, Clock::now())};
  };
  const Totals few = measure(kRunnerRunsFew), many = measure(kRunnerRunsMany);
  const double runs = static_cast<double>(kRunnerRunsMany - kRunnerRunsFew);
  double rest = (many.total_ms - few.total_ms) - (many.body_ms - few.body_ms);
  std::printf("RUNNER %zu %s %zu", metrics.size(), thermal == kscope::ThermalMode::off ? "off" : "on", passes);
  for (std::size_t c = 0; c < c_count; ++c) {
    const double ms = many.calls[c] - few.calls[c];
    rest -= ms;
    std::printf(" %.3f", ms / runs);
  }
  std::printf(" %.3f %.3f %.3f\n", (many.body_ms - few.body_ms) / runs, rest / runs,
              (many.total_ms - few.total_ms) / runs);
}

void profiler_case(const std::vector<std::string>& metrics, std::size_t ranges, bool flush, const std::string& chip,
                   CUcontext context, const std::vector<std::uint8_t>& availability, kscope::device::L2Flusher& l2,
                   const float* in, float* out, bool print_header) {
  enum { begin, flush_l2, start, launch, stop, sync, decode };
  StageClock clock({"begin", "flush", "start", "launch", "stop", "sync", "decode"});
  if (print_header)
    std::printf("PROFILER metrics ranges flush image_bytes passes%s   (ms, median of %d runs)\n",
                clock.header().c_str(), kRuns);
  const auto config = std::make_shared<const counters::MetricConfig>(chip, metrics, availability);
  counters::RangeProfiler profiler(context, config, counters::RangeKind::per_kernel, counters::BatchImage::kMaxRanges);
  std::size_t passes = 0;
  for (int run = 0; run < kWarmupBatches + kRuns; ++run) {
    clock.start();
    profiler.begin_batch(ranges);
    clock.lap(begin);
    passes = 0;
    for (bool more = true; more; ++passes) {
      if (flush) {
        l2.flush(cudaStreamLegacy);
        kscope_test::check(cudaStreamSynchronize(cudaStreamLegacy), "cudaStreamSynchronize");
      }
      clock.lap(flush_l2);
      profiler.start();
      clock.lap(start);
      kscope_test::launch_copy(in, out, kFloats);
      clock.lap(launch);
      more = !profiler.stop();
      clock.lap(stop);
    }
    kscope_test::check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
    clock.lap(sync);
    if (profiler.decode().size() != 1) throw std::runtime_error("expected one range");
    clock.lap(decode);
    clock.end(run >= kWarmupBatches);
  }
  std::printf("PROFILER %zu %zu %s %zu %zu%s\n", metrics.size(), ranges, flush ? "yes" : "no",
              profiler.counter_data_bytes(), passes, clock.medians().c_str());
}

// The copy's ranges are those that read most of its 16 MiB from DRAM (the flush's kernels read
// almost nothing): metric 1 of kSets[1] is dram__bytes_read.sum.
void batch_case(const std::vector<std::string>& metrics, counters::RangeKind kind, const std::string& chip,
                CUcontext context, const std::vector<std::uint8_t>& availability, kscope::device::L2Flusher& l2,
                const float* in, float* out) {
  constexpr std::size_t kBatchRuns = 50;
  const bool per_kernel = kind == counters::RangeKind::per_kernel;
  const std::size_t ranges = per_kernel ? 4 * kBatchRuns : kBatchRuns;
  const auto config = std::make_shared<const counters::MetricConfig>(chip, metrics, availability);
  counters::RangeProfiler profiler(context, config, kind, ranges);
  std::vector<double> ms;
  std::vector<std::vector<double>> values(metrics.size());
  std::size_t passes = 0, decoded = 0;
  for (int batch = 0; batch < kWarmupBatches + kRuns; ++batch) {
    const auto start = Clock::now();
    profiler.begin_batch(ranges);
    passes = 0;
    for (bool more = true; more; ++passes) {
      profiler.start();
      for (std::size_t run = 0; run < kBatchRuns; ++run) {
        l2.flush(cudaStreamLegacy);
        if (!per_kernel) profiler.push_range(counters::user_range_name(run, 0));
        kscope_test::launch_copy(in, out, kFloats);
        if (!per_kernel) profiler.pop_range();
      }
      more = !profiler.stop();
    }
    const auto results = profiler.decode();
    if (batch < kWarmupBatches) continue;
    ms.push_back(ms_between(start, Clock::now()) / kBatchRuns);
    decoded = results.size();
    for (const auto& range : results)
      if (range.values.at(1) > 0.5 * kFloats * sizeof(float))
        for (std::size_t m = 0; m < metrics.size(); ++m) values[m].push_back(range.values[m]);
  }
  std::printf("BATCH %zu %s %zu %zu %zu %.3f", metrics.size(), per_kernel ? "per_kernel" : "per_region",
              kBatchRuns, decoded, passes, kscope::summarize(ms, 0).median);
  for (auto& v : values) std::printf(" %.4g", v.empty() ? 0.0 : kscope::summarize(v, 0).median);
  std::printf("\n");
}

}  // namespace

int main(int argc, char** argv) {
  if (kscope_test::report_no_gpu()) return 2;
  const bool batch_only = argc > 1 && std::string(argv[1]) == "batch";  // the BATCH rows alone
  try {
    kscope_test::DeviceFloats in(kFloats), out(kFloats);
    if (batch_only) {
      const CUcontext context = counters::current_context();
      const std::string chip = counters::chip_of_device(0);  // initialises the profiler first
      const auto availability = counters::counter_availability(context);
      kscope::device::L2Flusher l2(0);
      for (auto kind : {counters::RangeKind::per_kernel, counters::RangeKind::per_region})
        batch_case(kSets[1], kind, chip, context, availability, l2, in.get(), out.get());
      return 0;
    }
    first_case(in.get(), out.get());
    bool header = true;
    for (const auto& metrics : kSets)
      for (std::size_t batch_runs : {std::size_t(1), std::size_t(50)}) {
        backend_case(metrics, Telemetry::none, batch_runs, in.get(), out.get(), header);
        header = false;
      }
    backend_case(kSets[0], Telemetry::clocks, 50, in.get(), out.get(), false);
    backend_case(kSets[0], Telemetry::margin, 50, in.get(), out.get(), false);
    using kscope::ThermalMode;
    runner_case(kSets[0], ThermalMode::automatic, in.get(), out.get(), true);
    runner_case(kSets[0], ThermalMode::off, in.get(), out.get(), false);
    runner_case(kSets[1], ThermalMode::automatic, in.get(), out.get(), false);
    runner_case(kSets[1], ThermalMode::off, in.get(), out.get(), false);
    const CUcontext context = counters::current_context();
    const std::string chip = counters::chip_of_device(0);
    const auto availability = counters::counter_availability(context);
    kscope::device::L2Flusher l2(0);
    header = true;
    for (const auto& metrics : kSets)
      for (std::size_t ranges : {std::size_t(512), std::size_t(16)})
        for (bool flush : {false, true}) {
          profiler_case(metrics, ranges, flush, chip, context, availability, l2, in.get(), out.get(), header);
          header = false;
        }
    for (auto kind : {counters::RangeKind::per_kernel, counters::RangeKind::per_region})
      batch_case(kSets[1], kind, chip, context, availability, l2, in.get(), out.get());
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "counters_stages: %s\n", e.what());
    return 1;
  }
}

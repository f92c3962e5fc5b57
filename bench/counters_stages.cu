// Where one run of the counter backend spends its wall time, call by call, on one 16 MiB copy per
// pass (the per-kernel case of counters_overhead), for a 1- and a 5-metric set:
//   BACKEND   CountersBackend driven through the MeasurementBackend interface, as the session
//             drives it (cache_control all: a flush before the region of every pass), with no
//             NVML read between runs, the clocks, or the thermal margin;
//   RUNNER    kscope::profile's session around CountersBackend, each kind of backend call timed,
//             with the thermal guard on or off;
//   PROFILER  the range profiler alone (CUPTI_AutoRange, CUPTI_UserReplay), with a counter data
//             image for 512 or 16 ranges, with or without the L2 flush before each pass.
// scripts/gpu_check.sh runs it; it needs counter permission. Times in ms, BACKEND and PROFILER the
// median run, RUNNER the mean run (first to last call of the body):
//   BACKEND <metrics> <nvml> <passes> begin_batch flush region_begin launch region_end end_run another_pass collect
//           total
//   RUNNER <metrics> <thermal> <runs> <passes> begin_batch flush region_begin region_end end_run another_pass
//          collect nvml body runner total   (body: its own time less the backend calls; runner: the rest)
//   PROFILER <metrics> <ranges> <flush> <image bytes> <passes> begin flush start launch stop sync decode total
#include <array>
#include <chrono>
#include <cstdio>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

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
constexpr int kWarmupRuns = 2;
constexpr int kRuns = 15;

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

// Wall time per named stage, summed within a run and kept per run.
class StageClock {
 public:
  explicit StageClock(std::vector<const char*> stages) : names_(std::move(stages)), ms_(names_.size() + 1) {}
  void start_run() {
    run_.assign(names_.size(), 0.0);
    run_start_ = mark_ = Clock::now();
  }
  void lap(std::size_t stage) {
    const auto now = Clock::now();
    run_[stage] += std::chrono::duration<double, std::milli>(now - mark_).count();
    mark_ = now;
  }
  void end_run(bool keep) {
    if (!keep) return;
    for (std::size_t s = 0; s < run_.size(); ++s) ms_[s].push_back(run_[s]);
    ms_.back().push_back(std::chrono::duration<double, std::milli>(Clock::now() - run_start_).count());
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
  std::vector<double> run_;
  Clock::time_point run_start_, mark_;
};

// NVML read around each run: none, the clocks (before and after, as the runner reads them), or
// the thermal margin before it (the runner's thermal guard reads it at most every 100 ms).
enum class Telemetry { none, clocks, margin };
const char* const kTelemetryNames[] = {"none", "clocks", "margin"};

void backend_case(const std::vector<std::string>& metrics, Telemetry telemetry, const float* in, float* out,
                  bool print_header) {
  enum { begin_batch, flush, region_begin, launch, region_end, end_run, another_pass, collect };
  StageClock clock({"begin_batch", "flush", "region_begin", "launch", "region_end", "end_run", "another_pass",
                    "collect"});
  if (print_header) std::printf("BACKEND metrics nvml passes%s   (ms, median of %d runs)\n", clock.header().c_str(), kRuns);
  const kscope::Settings settings = counter_settings(metrics);
  kscope::CountersBackend backend(settings);
  backend.begin_session(settings);
  for (int run = 0; run < kWarmupRuns + kRuns; ++run) {
    if (telemetry == Telemetry::clocks) backend.device_control()->clocks();
    if (telemetry == Telemetry::margin) backend.device_control()->thermal_margin_c();
    clock.start_run();
    backend.begin_batch(1);
    clock.lap(begin_batch);
    kscope::RunContext context;
    context.run = static_cast<std::size_t>(run);
    const std::string name = "copy";
    const std::vector<kscope::RegionRecord> regions{{name, false, ""}};
    for (bool more = true; more; ++context.pass) {
      backend.begin_run(context);
      backend.flush_cache();
      clock.lap(flush);
      backend.region_begin({context, 0, name});
      clock.lap(region_begin);
      kscope_test::launch_copy(in, out, kFloats);
      clock.lap(launch);
      backend.region_end({context, 0, name});
      clock.lap(region_end);
      backend.end_run(context, regions);
      clock.lap(end_run);
      more = backend.another_pass_needed();
      clock.lap(another_pass);
    }
    if (backend.collect_batch().size() != 1) throw std::runtime_error("expected one collected run");
    if (telemetry == Telemetry::clocks) backend.device_control()->clocks();
    clock.lap(collect);
    clock.end_run(run >= kWarmupRuns);
  }
  backend.end_session();
  std::printf("BACKEND %zu %s %zu%s\n", metrics.size(), kTelemetryNames[static_cast<int>(telemetry)], backend.passes(),
              clock.medians().c_str());
}

template <class F>
void add_ms(double& total, F&& f) {
  const auto t0 = Clock::now();
  f();
  total += std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

// The runner's calls into the backend and its NVML telemetry, each kind's wall time added up.
enum Call { c_begin_batch, c_flush, c_region_begin, c_region_end, c_end_run, c_another_pass, c_collect, c_nvml, c_count };
const char* const kCallNames[] = {"begin_batch", "flush",        "region_begin", "region_end",
                                  "end_run",     "another_pass", "collect",      "nvml"};
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
  void begin_batch(std::size_t runs) override { add_ms(ms_[c_begin_batch], [&] { inner_.begin_batch(runs); }); }
  void begin_run(const kscope::RunContext& run) override { inner_.begin_run(run); }
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

void runner_case(const std::vector<std::string>& metrics, kscope::ThermalMode thermal, std::size_t runs_wanted,
                 const float* in, float* out, bool print_header) {
  if (print_header) {
    std::printf("RUNNER metrics thermal runs passes");
    for (const char* n : kCallNames) std::printf(" %s", n);
    std::printf(" body runner total   (ms per run, the mean; body: the body's own time, runner: the rest)\n");
  }
  kscope::Settings settings = counter_settings(metrics);
  settings.runs = runs_wanted;
  settings.warmup_runs = kWarmupRuns;
  settings.thermal_mode = thermal;
  kscope::CountersBackend counters(settings);
  TimedBackend backend(counters);
  const auto in_calls = [&] {
    double sum = 0;
    for (double v : backend.ms()) sum += v;
    return sum;
  };
  // At every call of the body: the time and the shares so far. Per run is taken from the first
  // run's first call to the last run's, so session setup and teardown are left out.
  struct Mark {
    Clock::time_point at;
    CallTimes calls;
    double body_ms;
  };
  std::vector<Mark> marks;
  double body_ms = 0;  // the body's wall time less the backend calls made from it
  kscope::profile_with_backend(kscope::Sweep().axis("case", {"copy"}), settings,
                               [&](const kscope::Config&) {
                                 const auto t0 = Clock::now();
                                 const double calls0 = in_calls();
                                 marks.push_back({t0, backend.ms(), body_ms});
                                 {
                                   kscope::Annotation region("copy");
                                   kscope_test::launch_copy(in, out, kFloats);
                                 }
                                 body_ms += std::chrono::duration<double, std::milli>(Clock::now() - t0).count() -
                                            (in_calls() - calls0);
                               },
                               backend);
  const std::size_t runs = runs_wanted + kWarmupRuns - 1;
  const Mark& first = marks.front();
  const Mark& last = marks.at(marks.size() / (runs + 1) * runs);
  const double total = std::chrono::duration<double, std::milli>(last.at - first.at).count();
  double rest = total - (last.body_ms - first.body_ms);
  std::printf("RUNNER %zu %s %zu %zu", metrics.size(), thermal == kscope::ThermalMode::off ? "off" : "on", runs_wanted,
              counters.passes());
  for (std::size_t c = 0; c < c_count; ++c) {
    const double ms = last.calls[c] - first.calls[c];
    rest -= ms;
    std::printf(" %.3f", ms / runs);
  }
  std::printf(" %.3f %.3f %.3f\n", (last.body_ms - first.body_ms) / runs, rest / runs, total / runs);
}

void profiler_case(const std::vector<std::string>& metrics, std::size_t ranges, bool flush, const std::string& chip,
                   CUcontext context, const std::vector<std::uint8_t>& availability, kscope::device::L2Flusher& l2,
                   const float* in, float* out, bool print_header) {
  enum { begin, flush_l2, start, launch, stop, sync, decode };
  StageClock clock({"begin", "flush", "start", "launch", "stop", "sync", "decode"});
  if (print_header)
    std::printf("PROFILER metrics ranges flush image_bytes passes%s   (ms, median of %d runs)\n", clock.header().c_str(),
                kRuns);
  const counters::MetricConfig config(chip, metrics, availability);
  counters::RangeProfiler profiler(context, config, counters::RangeKind::per_kernel, ranges);
  std::size_t passes = 0;
  for (int run = 0; run < kWarmupRuns + kRuns; ++run) {
    clock.start_run();
    profiler.begin_run();
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
    clock.end_run(run >= kWarmupRuns);
  }
  std::printf("PROFILER %zu %zu %s %zu %zu%s\n", metrics.size(), ranges, flush ? "yes" : "no",
              profiler.counter_data_bytes(), passes, clock.medians().c_str());
}

}  // namespace

int main() {
  if (kscope_test::report_no_gpu()) return 2;
  try {
    kscope_test::DeviceFloats in(kFloats), out(kFloats);
    backend_case(kSets[0], Telemetry::none, in.get(), out.get(), true);
    backend_case(kSets[0], Telemetry::clocks, in.get(), out.get(), false);
    backend_case(kSets[0], Telemetry::margin, in.get(), out.get(), false);
    backend_case(kSets[1], Telemetry::none, in.get(), out.get(), false);
    // 200 runs of the 1-metric set span several of the thermal guard's 100 ms checks.
    using kscope::ThermalMode;
    runner_case(kSets[0], ThermalMode::automatic, 200, in.get(), out.get(), true);
    runner_case(kSets[0], ThermalMode::off, 200, in.get(), out.get(), false);
    runner_case(kSets[1], ThermalMode::automatic, kRuns, in.get(), out.get(), false);
    runner_case(kSets[1], ThermalMode::off, kRuns, in.get(), out.get(), false);
    const CUcontext context = counters::current_context();
    const std::string chip = counters::chip_of_device(0);
    const auto availability = counters::counter_availability(context);
    kscope::device::L2Flusher l2(0);
    bool first = true;
    for (const auto& metrics : kSets)
      for (std::size_t ranges : {std::size_t(512), std::size_t(16)})
        for (bool flush : {false, true}) {
          profiler_case(metrics, ranges, flush, chip, context, availability, l2, in.get(), out.get(), first);
          first = false;
        }
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "counters_stages: %s\n", e.what());
    return 1;
  }
}

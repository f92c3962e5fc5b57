#include "backends/counters/counters_backend.hpp"

#include <algorithm>
#include <atomic>
#include <bit>
#include <cstdio>
#include <set>

#include "backends/counters/driver_api.hpp"
#include "backends/cupti/cupti_backend.hpp"
#include "backends/cupti_subscriber.hpp"
#include "backends/events/events_backend.hpp"
#include "device/cuda_check.hpp"
#include "kscope/errors.hpp"
#include "kscope/metrics.hpp"

namespace kscope {
namespace {

using counters::RangeKind;

// CUPTI allows one range profiler object per context and checks none of it itself.
std::atomic<bool> g_session_open{false};

}  // namespace

CountersBackend::CountersBackend(const Settings& settings)
    : device_(settings.device),
      kind_(settings.replay_mode == ReplayMode::kernel ? RangeKind::per_kernel : RangeKind::per_region),
      chip_(counters::chip_of_device(device_.facts().ordinal)),
      names_(settings.metrics.empty() ? sol_metrics() : settings.metrics) {
  const auto& catalog = counters::MetricCatalog::of(chip_);
  std::set<std::string> seen;
  for (const auto& name : names_) {
    if (!seen.insert(name).second)
      throw ConfigError("Settings::metrics lists '" + name + "' twice: list each metric once");
    const MetricInfo info = catalog.require(name);
    specs_.push_back({name, info.unit, info.description});
  }
  passes_ = counters::MetricConfig(chip_, names_).passes();
}

CountersBackend::~CountersBackend() { end_session(); }

SessionInfo CountersBackend::describe() const {
  SessionInfo info = device_.describe("counters");
  info.replay_passes = passes_;
  return info;
}

void CountersBackend::begin_session(const Settings& settings) {
  if (g_session_open.exchange(true)) {
    throw BackendError("a kscope counters session is already open in this process: CUPTI allows one range profiler "
                       "per context, so profile() calls with Backend::counters cannot overlap; run them one after "
                       "the other");
  }
  session_open_ = true;
  try {
    device_.begin_session(settings);
    context_ = counters::current_context();
    counters::require_profiling_support(counters::device_handle(device_.facts().ordinal), device_.facts().name);
    tracker_.enable();
    // Availability must be read before the range profiler is enabled on the context.
    config_ = std::make_unique<counters::MetricConfig>(chip_, names_, counters::counter_availability(context_));
    passes_ = config_->passes();
    capacity_ = kInitialRanges;
    profiler_ = std::make_unique<counters::RangeProfiler>(context_, *config_, kind_, capacity_);
  } catch (...) {
    end_session();
    throw;
  }
  if (settings.verbosity != Verbosity::quiet) {
    std::fprintf(stderr,
                 "kscope: counters: %zu metric(s) on %s need %zu replay pass(es) per run (replay_mode=%s): the body "
                 "runs %zu time(s) per run%s\n",
                 names_.size(), chip_.c_str(), passes_, to_string(settings.replay_mode).c_str(), passes_,
                 settings.cache_control == CacheControl::all ? ", the L2 flushed before every region of every pass"
                                                             : "");
  }
  if (settings.verbosity == Verbosity::debug) {
    std::fprintf(stderr,
                 "kscope: counters: config image %zu bytes, counter data image %zu bytes for %zu ranges (grows "
                 "with the ranges of a run, up to %zu)\n",
                 config_->image().size(), profiler_->counter_data_bytes(), capacity_, kMaxRanges);
  }
}

void CountersBackend::end_session() noexcept {
  if (!session_open_) return;
  tracker_.disable();
  profiler_.reset();
  config_.reset();
  in_pass_ = false;
  pass_ = 0;
  first_pass_.clear();
  session_open_ = false;
  g_session_open = false;
}

void CountersBackend::begin_run() {
  if (!profiler_) profiler_ = std::make_unique<counters::RangeProfiler>(context_, *config_, kind_, capacity_);
  profiler_->begin_run();
  in_pass_ = false;
  pass_ = 0;
  first_pass_.clear();
}

bool CountersBackend::grew_for(std::size_t ranges) {
  if (ranges <= capacity_ || capacity_ >= kMaxRanges) return false;
  capacity_ = std::min(kMaxRanges, std::bit_ceil(ranges));
  profiler_.reset();  // one range profiler per context: the old one goes first
  begin_run();        // makes the larger one and starts the run over
  return true;
}

void CountersBackend::flush_cache() {
  tracker_.note_flush();
  device_.flush_l2(cudaStreamLegacy);
  // Finished before the region's range (or the pass) starts, so no counter sees the flush.
  device::check_cuda(cudaStreamSynchronize(cudaStreamLegacy), "cudaStreamSynchronize (after the L2 flush)");
}

void CountersBackend::region_begin(std::size_t region) {
  // A pass opens at its first region, after the runner's flush, so no flush is measured before it.
  if (!in_pass_) {
    regions_in_pass_ = 0;
    tracker_.start_pass();
    profiler_->start();
    in_pass_ = true;
  }
  tracker_.set_region(static_cast<std::ptrdiff_t>(region));
  ++regions_in_pass_;
  if (kind_ == RangeKind::per_region) profiler_->push_range(std::to_string(region));
}

void CountersBackend::region_end(std::size_t) {
  if (kind_ == RangeKind::per_region) profiler_->pop_range();
  tracker_.set_region(-1);
}

bool CountersBackend::another_pass_needed() {
  if (!in_pass_) return false;  // the body opened no region: nothing was profiled
  in_pass_ = false;
  std::vector<counters::Launch> launches = tracker_.end_pass();
  const bool all_submitted = profiler_->stop();
  ++pass_;
  if (pass_ == 1) {
    // Every launch the tracker saw, flushes included, may be a range (see attribute_kernel_ranges).
    if (grew_for(kind_ == RangeKind::per_kernel ? launches.size() : regions_in_pass_)) return true;
    first_pass_ = std::move(launches);
  } else {
    counters::check_same_launches(first_pass_, launches, pass_);
  }
  if (!all_submitted && pass_ >= passes_ + 2) {
    throw BackendError("the range profiler still wants more passes after " + std::to_string(pass_) +
                       " although the metrics need " + std::to_string(passes_) +
                       " (kscope bug: please report it with this message)");
  }
  return !all_submitted;
}

std::vector<std::vector<KernelMeasurement>> CountersBackend::collect_run(std::size_t region_count) {
  if (pass_ == 0) return std::vector<std::vector<KernelMeasurement>>(region_count);
  const std::vector<counters::RangeResult> ranges = profiler_->decode();
  return kind_ == RangeKind::per_kernel ? counters::attribute_kernel_ranges(first_pass_, ranges, region_count)
                                        : counters::attribute_user_ranges(first_pass_, ranges, region_count);
}

void CountersBackend::abandon_run() noexcept {
  tracker_.end_pass();
  tracker_.set_region(-1);
  cudaDeviceSynchronize();  // let the failed run's kernels finish before the profiler goes
  // A profiler left mid-pass is not reused: the next run enables a fresh one.
  profiler_.reset();
  in_pass_ = false;
  pass_ = 0;
  first_pass_.clear();
}

std::unique_ptr<MeasurementBackend> make_counters_backend(const Settings& settings) {
  if (settings.backend != Backend::automatic) return std::make_unique<CountersBackend>(settings);
  const auto fall_back = [&](std::unique_ptr<MeasurementBackend> timing, const char* name, const char* metric,
                             const std::string& reason) {
    std::fprintf(stderr,
                 "kscope: warning: Backend::automatic: hardware counters are not available here, so kernel durations "
                 "are measured with Backend::%s (metric %s)%s. Every row's Backend column says so. Reason: %s\n",
                 name, metric, settings.metrics.empty() ? "" : " instead of the requested Settings::metrics",
                 reason.c_str());
    return timing;
  };
  // A wrong metric name (ConfigError) is not caught: it is the caller's to fix, not a reason to
  // measure something else.
  try {
    auto counters = std::make_unique<CountersBackend>(settings);
    // The probe: everything a session needs, including the range profiler on the context.
    Settings probe = settings;
    probe.verbosity = Verbosity::quiet;
    counters->begin_session(probe);
    counters->end_session();
    return counters;
  } catch (const cupti::OtherProfilerError& e) {
    return fall_back(std::make_unique<EventsBackend>(settings.device), "events", "events__region_duration", e.what());
  } catch (const CudaError&) {
    throw;  // no usable GPU: no backend can measure
  } catch (const BackendError& e) {
    return fall_back(std::make_unique<CuptiBackend>(settings.device), "cupti", "cupti__kernel_duration", e.what());
  }
}

}  // namespace kscope

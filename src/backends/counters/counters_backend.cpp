#include "backends/counters/counters_backend.hpp"

#include <algorithm>
#include <bit>
#include <set>

#include "backends/counters/driver_api.hpp"
#include "core/caller.hpp"
#include "core/log.hpp"
#include "device/cuda_check.hpp"
#include "kscope/errors.hpp"
#include "kscope/metrics.hpp"

namespace kscope {
using counters::RangeKind;

CountersBackend::CountersBackend(const Settings& settings)
    : device_(settings.device),
      kind_(settings.replay_mode == ReplayMode::kernel ? RangeKind::per_kernel : RangeKind::per_region),
      chip_(counters::chip_of_device(device_.facts().ordinal)),
      names_(settings.metrics.empty() ? default_metrics(Backend::counters) : settings.metrics),
      layout_(names_, device_.facts().sm_count) {
  using detail::spell;
  const auto& catalog = counters::MetricCatalog::of(chip_);
  std::set<std::string> seen;
  for (const auto& name : names_) {
    if (!seen.insert(name).second)
      throw ConfigError(detail::option("metrics") + " lists '" + name + "' twice: list each metric once");
    if (const counters::LaunchMetric* launch = counters::find_launch_metric(name)) {
      if (kind_ == RangeKind::per_region)
        throw ConfigError("'" + name + "' is a value of each kernel launch, but " +
                          spell("ReplayMode::range", "replay_mode='range'") +
                          " measures whole regions, which may hold several kernels: use " +
                          spell("ReplayMode::kernel", "replay_mode='kernel'") + " for launch__ metrics");
      specs_.push_back({name, launch->unit, launch->description});
      continue;
    }
    const MetricInfo info = catalog.require(name);
    specs_.push_back({name, info.unit, info.description});
  }
  passes_ = counters::MetricConfig(chip_, layout_.counter_names()).passes();
}

CountersBackend::~CountersBackend() { end_session(); }

SessionInfo CountersBackend::describe() const {
  SessionInfo info = device_.describe(BackendId::counters);
  info.replay_passes = passes_;
  return info;
}

void CountersBackend::begin_session(const Settings& settings) {
  session_open_ = true;
  try {
    device_.begin_session(settings);
    context_ = counters::current_context();
    counters::require_profiling_support(counters::device_handle(device_.facts().ordinal), device_.facts().name);
    tracker_.enable();
    // Availability must be read before the range profiler is enabled on the context.
    config_ = std::make_unique<counters::MetricConfig>(chip_, layout_.counter_names(),
                                                       counters::counter_availability(context_));
    passes_ = config_->passes();
    capacity_ = kInitialRanges;
    profiler_ = std::make_unique<counters::RangeProfiler>(context_, *config_, kind_, capacity_);
  } catch (...) {
    end_session();
    throw;
  }
  detail::log_info("counters: " + std::to_string(names_.size()) + " metric(s) on " + chip_ + " need " +
                   std::to_string(passes_) + " replay pass(es) per run (replay_mode=" +
                   to_string(settings.replay_mode) + "): the body runs " + std::to_string(passes_) +
                   " time(s) per run" +
                   (settings.cache_control == CacheControl::all ? ", the L2 flushed before every region of every pass"
                                                                : ""));
  detail::log_debug("counters: config image " + std::to_string(config_->image().size()) +
                    " bytes, counter data image " + std::to_string(profiler_->counter_data_bytes()) + " bytes for " +
                    std::to_string(capacity_) + " ranges (grows with the ranges of a run, up to " +
                    std::to_string(kMaxRanges) + ")");
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
}

void CountersBackend::begin_batch(std::size_t) { start_batch(); }

void CountersBackend::start_batch() {
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
  start_batch();      // makes the larger one and starts the batch over
  return true;
}

void CountersBackend::flush_cache() {
  tracker_.note_flush();
  device_.flush_l2(cudaStreamLegacy);
  // Finished before the region's range (or the pass) starts, so no counter sees the flush.
  device::check_cuda(cudaStreamSynchronize(cudaStreamLegacy), "cudaStreamSynchronize (after the L2 flush)");
}

void CountersBackend::region_begin(const RegionContext& region) {
  // A pass opens at its first region, after the runner's flush, so no flush is measured before it.
  if (!in_pass_) {
    regions_in_pass_ = 0;
    tracker_.start_pass();
    profiler_->start();
    in_pass_ = true;
  }
  tracker_.set_region(static_cast<std::ptrdiff_t>(region.index));
  ++regions_in_pass_;
  if (kind_ == RangeKind::per_region) profiler_->push_range(std::to_string(region.index));
}

void CountersBackend::region_end(const RegionContext&) {
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
    throw InternalError("the range profiler still wants more passes after " + std::to_string(pass_) +
                        " although the metrics need " + std::to_string(passes_) +
                        " (kscope bug: please report it with this message)");
  }
  return !all_submitted;
}

void CountersBackend::end_run(const RunContext&, const std::vector<RegionRecord>& regions) {
  region_count_ = regions.size();
}

std::vector<RunMeasurement> CountersBackend::collect_batch() {
  if (pass_ == 0) return {RunMeasurement(region_count_)};
  const std::vector<counters::RangeResult> ranges = profiler_->decode();
  return {kind_ == RangeKind::per_kernel ? counters::attribute_kernel_ranges(first_pass_, ranges, region_count_, layout_)
                                         : counters::attribute_user_ranges(first_pass_, ranges, region_count_)};
}

void CountersBackend::abandon_run(const RunContext&) noexcept {
  tracker_.end_pass();
  tracker_.set_region(-1);
  cudaDeviceSynchronize();  // let the failed run's kernels finish before the profiler goes
  // A profiler left mid-pass is not reused: the next run enables a fresh one.
  profiler_.reset();
  in_pass_ = false;
  pass_ = 0;
  first_pass_.clear();
}

}  // namespace kscope

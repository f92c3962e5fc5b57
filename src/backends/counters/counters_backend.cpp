#include "backends/counters/counters_backend.hpp"

#include <algorithm>
#include <bit>
#include <set>

#include "backends/counters/driver_api.hpp"
#include "backends/counters/kept_profiler.hpp"
#include "backends/counters/range_attribution.hpp"
#include "core/model/caller_language.hpp"
#include "core/model/log.hpp"
#include "core/engine/sampling_plan.hpp"
#include "device/cuda_check.hpp"
#include "kscope/backend_registry.hpp"
#include "kscope/errors.hpp"
#include "kscope/metrics.hpp"

namespace kscope {
using counters::RangeKind;
namespace {

// The ranges of the session's first batch, as the batch planner will plan it (the warm-ups and the
// runs the sampling plan expects of a config) at the ranges per run expected before any batch: the
// room the session's profiler is made with, so that its first start (whose cost grows with the room)
// pays for no more.
std::size_t first_batch_ranges(const Settings& s) {
  const std::size_t runs = s.warmup_runs + detail::SamplingPlan(s, 0.0).expected_runs();
  return std::clamp<std::size_t>(runs * counters::BatchImage::kFirstRangesPerRun, 1, counters::BatchImage::kMaxRanges);
}

}  // namespace

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
    const MetricInfo info = catalog.require(
        name, spell(" for Settings::metrics: ", " for 'metrics' parameter for kscope.analyze.kernel(): "));
    specs_.push_back({name, info.unit, info.description});
  }
}

CountersBackend::~CountersBackend() { end_session(); }

SessionInfo CountersBackend::describe() const {
  SessionInfo info = device_.describe(Backend::counters);
  info.replay_passes = passes_;
  return info;
}

void CountersBackend::begin_session(const Settings& settings) {
  session_open_ = true;
  std::size_t one_range = 0, per_range = 0;  // CUPTI's image sizes, linear in the ranges
  try {
    device_.begin_session(settings);
    context_ = counters::current_context();
    counters::require_profiling_support(counters::device_handle(device_.facts().ordinal), device_.facts().name);
    tracker_.enable();
    // Availability is read before any range profiler is enabled on the context (and kept).
    config_ = counters::MetricConfig::for_device(chip_, layout_.counter_names(), counters::counter_availability(context_),
                                                 counters::ConfigCache::for_user());
    passes_ = config_->passes();
    const std::size_t ranges = first_batch_ranges(settings);
    profiler_ = counters::take_kept_profiler(context_, *config_, kind_, ranges);
    if (profiler_) detail::log_debug("counters: the range profiler of the previous call is used again");
    else make_profiler(ranges);
    one_range = profiler_->image_bytes(1);
    per_range = profiler_->image_bytes(2) - one_range;
    image_.emplace(one_range - per_range, per_range);
  } catch (...) {
    end_session();
    throw;
  }
  detail::log_info("counters: " + std::to_string(names_.size()) + " metric(s) on " + chip_ + " need " +
                   std::to_string(passes_) + " replay pass(es) per run (replay_mode=" +
                   to_string(settings.replay_mode) + "): the body runs " + std::to_string(passes_) +
                   " time(s) per run, all runs of a batch in pass 1, then in pass 2, ..." +
                   (settings.cache_control == CacheControl::all ? ", the L2 flushed before every region of every pass"
                                                                : ""));
  detail::log_debug("counters: config image " + std::to_string(config_->image().size()) +
                    " bytes, counter data image " + std::to_string(one_range) + " bytes for one range and " +
                    std::to_string(per_range) + " per range more; a batch holds up to " +
                    std::to_string(image_->max_ranges()) + " ranges (" +
                    std::to_string(counters::BatchImage::kMaxImageBytes >> 20) + " MiB, at most " +
                    std::to_string(counters::BatchImage::kMaxRanges) + ")");
}

void CountersBackend::end_session() noexcept {
  if (!session_open_) return;
  tracker_.disable();
  counters::keep_profiler(std::move(profiler_));  // for the next call, unless it was left mid-pass
  config_.reset();
  image_.reset();
  runs_.clear();
  in_pass_ = false;
  pass_ = 0;
  replay_first_pass_ = false;
  first_pass_.clear();
  session_open_ = false;
}

std::size_t CountersBackend::max_batch_runs() const { return image_ ? image_->max_runs() : 1; }

void CountersBackend::begin_batch(std::size_t runs) {
  runs_.clear();
  first_pass_.clear();
  in_pass_ = false;
  pass_ = 0;
  replay_first_pass_ = false;
  configure(image_->ranges_for(runs));
}

void CountersBackend::make_profiler(std::size_t ranges) {
  const std::size_t room = std::clamp<std::size_t>(std::bit_ceil(ranges), 1, counters::BatchImage::kMaxRanges);
  profiler_ = std::make_unique<counters::RangeProfiler>(context_, config_, kind_, room);
}

void CountersBackend::configure(std::size_t ranges) {
  // Room for what the batch needs, not always for the most: on the H200 a profiler's first start
  // took ~630 ms with room for 512 ranges per pass, against ~150 ms with room for 16.
  if (profiler_ && ranges > profiler_->max_ranges()) profiler_.reset();
  if (!profiler_) make_profiler(ranges);
  profiler_->begin_batch(ranges);
  capacity_ = ranges;
}

void CountersBackend::begin_run(const RunContext& run) {
  // A pass opens with its first run, so every run of the batch, the first too, has its flushes and
  // launches before the first region inside the pass: all runs make the same ranges.
  if (!in_pass_) {
    tracker_.start_pass();
    profiler_->start();
    in_pass_ = true;
  }
  tracker_.set_run(run.batch_index);
}

void CountersBackend::flush_cache() {
  // Everything enqueued before, on every stream (a side stream does not wait for the legacy one),
  // ends before the flush starts.
  device_.synchronize();
  // Its kernels launched one by one (a graph launch breaks CUPTI's AutoRange passes): on the H200
  // the discard kernel is a range of its own, the memset none. The tracker records the flush as one,
  // whatever its ranges, and attribution skips them.
  tracker_.begin_flush();
  try {
    device_.flush_l2(cudaStreamLegacy, device::MeasuredDevice::FlushLaunch::kernels);
  } catch (...) {
    tracker_.end_flush();
    throw;
  }
  tracker_.end_flush();
  // Finished before the region's range starts, and before any of its calls on any stream is made, so
  // no counter of the region sees the flush.
  device::check_cuda(cudaStreamSynchronize(cudaStreamLegacy), "cudaStreamSynchronize (after the L2 flush)");
}

void CountersBackend::region_begin(const RegionContext& region) {
  tracker_.set_region(static_cast<std::ptrdiff_t>(region.index));
  if (kind_ == RangeKind::per_region)
    profiler_->push_range(counters::user_range_name(region.run.batch_index, region.index));
}

void CountersBackend::region_end(const RegionContext&) {
  if (kind_ == RangeKind::per_region) {
    // The range ends once the region's work has, on every stream: a side stream's kernel may still
    // run when the region closes on the host.
    device_.synchronize();
    profiler_->pop_range();
  }
  tracker_.set_region(-1);
}

void CountersBackend::end_run(const RunContext& run, const std::vector<RegionRecord>& regions) {
  // Refused by name here, before the range profiler's stop fails with CUPTI_ERROR_UNKNOWN.
  if (kind_ == RangeKind::per_kernel && pass_ == 0) counters::refuse_graph_launches(tracker_.launches(run.batch_index));
  if (pass_ > 0) {
    counters::check_same_launches(counters::launches_of(first_pass_, run.batch_index),
                                  tracker_.launches(run.batch_index), run.pass);
    return;
  }
  // The first pass, or its replay: what the run's ranges take of the image.
  const BatchRun ended{regions.size(),
                       kind_ == RangeKind::per_kernel ? tracker_.count(run.batch_index) : regions.size()};
  if (run.batch_index < runs_.size()) {
    runs_[run.batch_index] = ended;
  } else if (run.batch_index == runs_.size()) {
    runs_.push_back(ended);
  } else {
    throw InternalError("run " + std::to_string(run.batch_index) + " of a batch ended after only " +
                        std::to_string(runs_.size()) + " (kscope bug: please report it with this message)");
  }
}

bool CountersBackend::batch_has_room() const { return image_->has_room(first_pass_ranges(), largest_run()); }

std::size_t CountersBackend::first_pass_ranges() const {
  std::size_t used = 0;
  for (const BatchRun& r : runs_) used += r.ranges;
  return used;
}

std::size_t CountersBackend::largest_run() const {
  std::size_t largest = 0;
  for (const BatchRun& r : runs_) largest = std::max(largest, r.ranges);
  return largest;
}

bool CountersBackend::another_pass_needed() {
  if (replay_first_pass_) {
    replay_first_pass_ = false;
    configure(std::clamp<std::size_t>(first_pass_ranges(), 1, counters::BatchImage::kMaxRanges));
    return true;
  }
  if (!in_pass_) throw InternalError("a replay pass ended that never started (kscope bug: please report it)");
  in_pass_ = false;
  std::vector<counters::Launch> launches = tracker_.end_pass();
  const bool all_submitted = profiler_->stop();
  ++pass_;
  if (pass_ == 1) {
    image_->expect(largest_run());
    // Every launch the tracker saw, flushes included, may be a range (see attribute_kernel_ranges).
    const std::size_t ranges = kind_ == RangeKind::per_kernel ? launches.size() : first_pass_ranges();
    if (const std::size_t grown = image_->grown(ranges, capacity_)) {
      profiler_.reset();  // mid-replay: not reused; one range profiler per context, the old one goes first
      configure(grown);
      pass_ = 0;
      return true;  // the first pass again, on the larger image
    }
    first_pass_ = std::move(launches);
  }
  if (!all_submitted && pass_ >= passes_ + 2) {
    throw InternalError("the range profiler still wants more passes after " + std::to_string(pass_) +
                        " although the metrics need " + std::to_string(passes_) +
                        " (kscope bug: please report it with this message)");
  }
  return !all_submitted;
}

std::vector<RunMeasurement> CountersBackend::collect_batch() {
  std::vector<std::size_t> region_counts;
  for (const BatchRun& r : runs_) region_counts.push_back(r.regions);
  const std::vector<counters::RangeResult> ranges = profiler_->decode();
  std::vector<RunMeasurement> out =
      kind_ == RangeKind::per_kernel ? counters::attribute_kernel_ranges(first_pass_, ranges, region_counts, layout_)
                                     : counters::attribute_user_ranges(first_pass_, ranges, region_counts);
  runs_.clear();
  first_pass_.clear();
  pass_ = 0;
  return out;
}

void CountersBackend::abandon_run(const RunContext& run) noexcept {
  tracker_.end_pass();
  tracker_.set_region(-1);
  cudaDeviceSynchronize();  // let the failed run's kernels finish before the profiler goes
  // A profiler left mid-pass is not reused. In pass 1 the runs that ended before the failed one are
  // kept, but its ranges are in the pass and cannot be taken out: the kept runs replay pass 1 on a
  // fresh profiler (another_pass_needed). In a later pass the whole batch is dropped.
  profiler_.reset();
  in_pass_ = false;
  pass_ = 0;
  first_pass_.clear();
  if (run.pass != 1) runs_.clear();
  runs_.resize(std::min(runs_.size(), run.batch_index));
  replay_first_pass_ = !runs_.empty();
}

}  // namespace kscope

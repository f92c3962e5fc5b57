#pragma once
// Backend::counters: hardware metrics named as Nsight Compute names them, collected in this
// process with CUPTI's range profiler. The engine drives the replay (CUPTI_UserReplay), pass-major:
// when the metrics need P passes, a batch of runs is replayed P times, each pass spanning every run
// of the batch between one start and one stop (CUPTI's start and stop cost 8 + 2.5 ms a pass for
// multi-pass sets on the H200: paid per batch, not per run). The body therefore runs P times per
// run, in the order run 1..k of pass 1, then run 1..k of pass 2, and the runner's L2 flush before
// every region happens in every pass, so cache_control=all gives cold-cache values on all of them.
//   ReplayMode::kernel  one auto range per kernel, values per kernel (like ncu's kernel replay)
//   ReplayMode::range   one user range per region ("run:region"), values over the whole region
// The body must repeat the same work in every pass; one that changes its own inputs (in-place
// updates) gives later runs and passes other data: with k runs in a batch, the inputs of pass 2
// have been changed k times (once before batches). Re-create such inputs in the body, before the
// annotation.
// The counter data image holds the batch's ranges (BatchImage: at most 256 MiB, 512 ranges), sized
// from the launches per run the last batch found (a flush counted as one); a first pass with more
// than the image holds makes a larger profiler, and that pass is replayed once more, so no run
// loses data. The L2 flush is one graph launch: CUPTI's documentation lists graph kernel nodes as
// unsupported in AutoRange with user replay, so the flush is expected to make no range and a pass
// to hold the measured kernels' ranges only; the count of ranges decides (range_attribution.hpp). The profiler and the metric config outlive the
// call (kept_profiler.hpp, MetricConfig::for_device): the next call that fits takes them over.
#include <cuda.h>

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "backends/counters/batch_image.hpp"
#include "backends/counters/launch_metrics.hpp"
#include "backends/counters/launch_tracker.hpp"
#include "backends/counters/profiler_host.hpp"
#include "backends/counters/range_profiler.hpp"
#include "device/cuda_device.hpp"
#include "kscope/measurement_backend.hpp"

namespace kscope {

class CountersBackend final : public MeasurementBackend {
 public:
  // Validates Settings::metrics (empty: sol_metrics()) against the device's chip, so an unknown
  // name fails with ConfigError and suggestions before the sweep starts. The launch__ metrics of
  // launch_metrics.hpp are computed from each kernel's launch (ReplayMode::kernel only).
  explicit CountersBackend(const Settings& settings);
  ~CountersBackend() override;

  std::vector<MetricSpec> metrics() const override { return specs_; }
  SessionInfo describe() const override;
  DeviceControl* device_control() override { return &device_.control(); }

  void begin_session(const Settings& settings) override;
  void end_session() noexcept override;

  std::size_t max_batch_runs() const override;
  void begin_batch(std::size_t runs) override;
  void begin_run(const RunContext& run) override;
  void flush_cache() override;
  void region_begin(const RegionContext& region) override;
  void region_end(const RegionContext& region) override;
  void end_run(const RunContext& run, const std::vector<RegionRecord>& regions) override;
  bool batch_has_room() const override;
  bool another_pass_needed() override;
  std::vector<RunMeasurement> collect_batch() override;
  void abandon_run(const RunContext& run) noexcept override;

  std::size_t passes() const { return passes_; }

 private:
  // A run of the batch, as its first pass left it.
  struct BatchRun {
    std::size_t regions = 0;
    std::size_t ranges = 0;  // launches (a flush counted as one) or regions: at least the ranges of the image
  };
  // Enables one on the context with room for `ranges` per pass, rounded up to a power of two (the
  // one before must be gone).
  void make_profiler(std::size_t ranges);
  // A fresh image for `ranges` ranges, on a new profiler when there is none; the first pass next.
  void configure(std::size_t ranges);
  std::size_t first_pass_ranges() const;  // of runs_, in all
  std::size_t largest_run() const;        // the most ranges one run of runs_ made

  device::MeasuredDevice device_;
  counters::RangeKind kind_;
  std::string chip_;
  std::vector<std::string> names_;
  counters::MetricLayout layout_;  // names_: which the range profiler counts, which come from the launches
  std::vector<MetricSpec> specs_;
  std::size_t passes_ = 0;

  CUcontext context_ = nullptr;
  std::shared_ptr<const counters::MetricConfig> config_;  // with the device's counter availability
  // Taken over from the previous call when it fits (kept_profiler.hpp), re-created to grow and
  // after an abandoned run, and kept for the next call at the end.
  std::unique_ptr<counters::RangeProfiler> profiler_;
  std::optional<counters::BatchImage> image_;          // CUPTI's image sizes for config_
  std::size_t capacity_ = 0;                           // ranges profiler_'s image holds
  counters::LaunchTracker tracker_;
  bool session_open_ = false;

  // The batch in progress.
  std::vector<BatchRun> runs_;  // that ended their first pass, in batch order
  bool in_pass_ = false;
  std::size_t pass_ = 0;  // passes completed since the first pass (re)started
  bool replay_first_pass_ = false;  // a run failed in pass 1: the runs before it replay it
  std::vector<counters::Launch> first_pass_;
};

}  // namespace kscope

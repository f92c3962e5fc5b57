#pragma once
// Backend::counters: hardware metrics named as Nsight Compute names them, collected in this
// process with CUPTI's range profiler. The engine drives the replay (CUPTI_UserReplay): when the
// metrics need P passes, the body runs P times per run, and the runner's L2 flush before every
// region happens in every pass, so cache_control=all gives cold-cache values on all of them.
//   ReplayMode::kernel  one auto range per kernel, values per kernel (like ncu's kernel replay)
//   ReplayMode::range   one user range per region, values over the whole region, gaps included
// The body must repeat the same work in every pass; one that changes its own inputs (in-place
// updates) gives later passes other data.
// The counter data image is sized for the ranges a run has: CUPTI's image grows with ranges x
// passes (5 metrics in 8 passes: 338 MB for 512 ranges, 0.12 s to reset every run; 10.6 MB for 16).
// It starts at 16 ranges; a first pass with more kernels (regions in range mode) makes a larger
// profiler, and that pass is replayed once more, so no run loses data.
#include <cuda.h>

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

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

  void begin_batch(std::size_t runs) override;
  void flush_cache() override;
  void region_begin(const RegionContext& region) override;
  void region_end(const RegionContext& region) override;
  void end_run(const RunContext& run, const std::vector<RegionRecord>& regions) override;
  bool another_pass_needed() override;
  std::vector<RunMeasurement> collect_batch() override;
  void abandon_run(const RunContext& run) noexcept override;

  std::size_t passes() const { return passes_; }

 private:
  // At most this many ranges (kernels, or regions in range mode) per run.
  static constexpr std::size_t kMaxRanges = 512;
  static constexpr std::size_t kInitialRanges = 16;
  // After pass 1: true (replay the pass) when the run has more ranges than the profiler holds,
  // which is then replaced by one with room for them.
  bool grew_for(std::size_t ranges);
  void start_batch();  // a fresh counter data image (a new profiler after an abandoned run)

  device::MeasuredDevice device_;
  counters::RangeKind kind_;
  std::string chip_;
  std::vector<std::string> names_;
  counters::MetricLayout layout_;  // names_: which the range profiler counts, which come from the launches
  std::vector<MetricSpec> specs_;
  std::size_t passes_ = 0;

  CUcontext context_ = nullptr;
  std::unique_ptr<counters::MetricConfig> config_;  // with the device's counter availability
  std::unique_ptr<counters::RangeProfiler> profiler_;  // re-created after an abandoned run
  std::size_t capacity_ = kInitialRanges;              // ranges profiler_'s image holds
  std::size_t regions_in_pass_ = 0;
  counters::LaunchTracker tracker_;
  bool session_open_ = false;
  bool in_pass_ = false;
  std::size_t pass_ = 0;  // passes completed in this batch
  std::size_t region_count_ = 0;  // of the batch's run
  std::vector<counters::Launch> first_pass_;
};

}  // namespace kscope

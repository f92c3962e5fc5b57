#pragma once
// Per-kernel GPU durations from the CUPTI Activity API (CONCURRENT_KERNEL records), attributed to
// regions without NVTX: a driver-API launch callback maps each launch's correlationId to the region
// open at that moment, whichever thread launched it (cupti/activity_tracer.*). For evaluate() it
// observes calls (cupti/cupti_calls.*): copies and fills are traced and attributed the same way,
// and each activity is flagged as launched after the call returned, or not joined to the caller's
// stream.
//
// With cache_control all, the region's kernels, copies and fills on streams that do not wait for the
// legacy stream (PyTorch's side streams) are made to wait for the L2 flush, and the flush for their
// earlier work, on the GPU (backends/stream_order.*): none runs beside it, whatever its stream.
//
// Runs are collected in batches: each launch is tagged with the run it belongs to, and one
// synchronize plus one activity flush hands back every run ended since the last collection.
#include <string>
#include <unordered_map>
#include <vector>

#include "backends/cupti/cupti_calls.hpp"
#include "backends/stream_order.hpp"
#include "core/model/kernel_names.hpp"
#include "device/cuda_device.hpp"
#include "kscope/measurement_backend.hpp"

namespace kscope {

class CuptiBackend final : public MeasurementBackend {
 public:
  explicit CuptiBackend(int device);
  ~CuptiBackend() override;

  std::vector<MetricSpec> metrics() const override;
  SessionInfo describe() const override { return device_.describe(Backend::cupti); }
  DeviceControl* device_control() override { return &device_.control(); }
  CallObserver* call_observer() override { return &calls_; }

  void begin_session(const Settings& settings) override;
  void end_session() noexcept override;

  // A synchronize and an activity flush cost ~0.3 ms: shared by up to this many runs (a one-pass
  // batch also ends once its oldest run is 20 ms old: core/engine/batch_planner.hpp).
  std::size_t max_batch_runs() const override { return kMaxBatchRuns; }
  void flush_cache() override;
  void synchronize() override { device_.synchronize(); }
  void region_begin(const RegionContext& region) override;
  void region_end(const RegionContext& region) override;
  void end_run(const RunContext& run, const std::vector<RegionRecord>& regions) override;
  std::vector<RunMeasurement> collect_batch() override;
  void abandon_run(const RunContext& run) noexcept override;

  static constexpr std::size_t kMaxBatchRuns = 1024;

 private:
  device::MeasuredDevice device_;
  cupti::CuptiCalls calls_;
  cupti::StreamOrder order_;
  std::vector<std::size_t> ended_region_counts_;  // per run ended since the last collection
  bool session_open_ = false;
  struct CollectionTime {  // summed over a session, for the debug log
    std::size_t collections = 0;
    double synchronize_s = 0, flush_s = 0, attribute_s = 0;
  } time_;
  KernelNames kernel_names_;
};

}  // namespace kscope

#pragma once
// Times each region with two CUDA events on the legacy default stream. It sees no kernels: a region
// yields one duration that includes launch latency and the gaps between the region's kernels.
// Blocking streams, per-thread default streams and the legacy stream order themselves against the
// events; work on streams that do not (cudaStreamNonBlocking: PyTorch's side streams) is made to
// wait for the start event and the stop event for it, on the GPU, through CUPTI's driver callbacks
// (backends/stream_order.*), so the events bracket it too. Where another tool owns CUPTI there are
// no callbacks: the session says so, and such work counts only where the caller joins it.
// A region whose work another thread launched is refused (core/region_thread.hpp).
#include <cuda_runtime_api.h>
#include <cupti.h>

#include <vector>

#include "backends/stream_order.hpp"
#include "core/region_thread.hpp"
#include "device/cuda_device.hpp"
#include "kscope/measurement_backend.hpp"

namespace kscope {

class EventsBackend final : public MeasurementBackend {
 public:
  explicit EventsBackend(int device);

  std::vector<MetricSpec> metrics() const override;
  SessionInfo describe() const override { return device_.describe(Backend::events); }
  DeviceControl* device_control() override { return &device_.control(); }

  void begin_session(const Settings& settings) override;
  void end_session() noexcept override;

  void flush_cache() override;
  void synchronize() override { device_.synchronize(); }
  void region_begin(const RegionContext& region) override;
  void region_end(const RegionContext& region) override;
  void end_run(const RunContext& run, const std::vector<RegionRecord>& regions) override;
  std::vector<RunMeasurement> collect_batch() override;
  void abandon_run(const RunContext& run) noexcept override;

 private:
  class Event {
   public:
    Event();
    ~Event();
    Event(Event&& other) noexcept;
    Event& operator=(Event&&) = delete;
    cudaEvent_t get() const { return event_; }

   private:
    cudaEvent_t event_ = nullptr;
  };
  struct Interval {
    Event start, stop;
  };

  static void CUPTIAPI on_callback(void* self, CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* data);

  device::MeasuredDevice device_;
  cupti::StreamOrder order_;
  detail::RegionThread region_thread_;  // a region's work launched from another thread is refused
  CUpti_SubscriberHandle subscriber_ = nullptr;  // the session's callbacks; null while none are enabled
  std::vector<Interval> intervals_;  // one per region index, reused by every run
  std::size_t region_count_ = 0;     // of the run collected next
};

}  // namespace kscope

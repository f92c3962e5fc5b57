#pragma once
// Times each region with two CUDA events on the legacy default stream. It sees no kernels: a region
// yields one duration that includes launch latency and the gaps between the region's kernels.
// Blocking streams, per-thread default streams and the legacy stream order themselves against the
// events; work on streams that do not (cudaStreamNonBlocking: PyTorch's side streams) is made to
// wait for the start event and the stop event for it, on the GPU, through CUPTI's driver callbacks
// (backends/stream_order.*), so the events bracket it too. Where another tool owns CUPTI there are
// no callbacks: the session says so, and such work counts only where the caller joins it.
// The same callbacks tell, region by region, whether the GPU waited for the host before the
// region's first work (core/engine/first_work.hpp): that wait is in the value, and the run is flagged with
// it (host_gap_ns) rather than passed off as the kernels' time.
#include <cuda_runtime_api.h>
#include <cupti.h>

#include <optional>
#include <vector>

#include "backends/stream_order.hpp"
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
    Event first;  // recorded by the region's first call, on its stream (FirstWork)
    std::optional<detail::FirstWork::Seen> seen;  // that call; none where no call was seen
  };

  static void CUPTIAPI on_callback(void* self, CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* data);

  device::MeasuredDevice device_;
  cupti::StreamOrder order_;
  CUpti_SubscriberHandle subscriber_ = nullptr;  // the session's callbacks; null while none are enabled
  std::vector<Interval> intervals_;  // one per region index, reused by every run
  std::size_t region_count_ = 0;     // of the run collected next
};

}  // namespace kscope

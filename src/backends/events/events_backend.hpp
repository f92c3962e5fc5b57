#pragma once
// Times each region with two CUDA events on the legacy default stream. It sees no kernels: a region
// yields one duration that includes launch latency and the gaps between the region's kernels.
#include <cuda_runtime_api.h>

#include <vector>

#include "device/cuda_device.hpp"
#include "kscope/measurement_backend.hpp"

namespace kscope {

class EventsBackend final : public MeasurementBackend {
 public:
  explicit EventsBackend(int device);

  std::vector<MetricSpec> metrics() const override;
  bool observes_kernels() const override { return false; }
  SessionInfo describe() const override { return device_.describe("events"); }

  void begin_session(const Settings& settings) override { device_.begin_session(settings); }
  void end_session() noexcept override {}

  void begin_run() override {}
  void flush_cache() override { device_.flush_l2(cudaStreamLegacy); }
  void region_begin(std::size_t region) override;
  void region_end(std::size_t region) override;
  std::vector<std::vector<KernelMeasurement>> collect_run(std::size_t region_count) override;
  void abandon_run() noexcept override;

  DeviceControl* device_control() override { return &device_.control(); }

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

  device::MeasuredDevice device_;
  std::vector<Interval> intervals_;  // one per region index, reused by every run
};

}  // namespace kscope

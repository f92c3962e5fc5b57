#include "backends/events/events_backend.hpp"

#include <utility>

#include "device/cuda_check.hpp"
#include "kscope/errors.hpp"

namespace kscope {

using device::check_cuda;

EventsBackend::Event::Event() { check_cuda(cudaEventCreate(&event_), "cudaEventCreate"); }

EventsBackend::Event::~Event() {
  if (event_ != nullptr) cudaEventDestroy(event_);
}

EventsBackend::Event::Event(Event&& other) noexcept
    : event_(std::exchange(other.event_, nullptr)) {}

EventsBackend::EventsBackend(int device) : device_(device) {}

std::vector<MetricSpec> EventsBackend::metrics() const {
  return {{"events__region_duration", "ns",
           "cudaEventElapsedTime between CUDA events recorded on the legacy default stream at "
           "region begin and end: one value per region, including launch latency and the gaps "
           "between its kernels (resolution about 0.5 us)"}};
}

// The legacy default stream orders against every blocking stream, so the events bracket the
// region's kernels whichever stream (or thread) launched them.
void EventsBackend::region_begin(std::size_t region) {
  while (intervals_.size() <= region) intervals_.emplace_back();
  check_cuda(cudaEventRecord(intervals_[region].start.get(), cudaStreamLegacy),
             "cudaEventRecord(region begin)");
}

void EventsBackend::region_end(std::size_t region) {
  check_cuda(cudaEventRecord(intervals_[region].stop.get(), cudaStreamLegacy),
             "cudaEventRecord(region end)");
}

std::vector<std::vector<KernelMeasurement>> EventsBackend::collect_run(std::size_t region_count) {
  if (region_count > intervals_.size()) {
    throw BackendError("events backend: asked for " + std::to_string(region_count) +
                       " regions but only " + std::to_string(intervals_.size()) +
                       " were recorded (kscope bug)");
  }
  std::vector<std::vector<KernelMeasurement>> measured(region_count);
  for (std::size_t r = 0; r < region_count; ++r) {
    check_cuda(cudaEventSynchronize(intervals_[r].stop.get()), "cudaEventSynchronize(region end)");
    float ms = 0;
    check_cuda(cudaEventElapsedTime(&ms, intervals_[r].start.get(), intervals_[r].stop.get()),
               "cudaEventElapsedTime");
    measured[r].push_back({std::string(), {static_cast<double>(ms) * 1e6}});
  }
  return measured;
}

void EventsBackend::abandon_run() noexcept {
  // Let the failed run's work finish so that its events are not read by the next run.
  cudaDeviceSynchronize();
}

}  // namespace kscope

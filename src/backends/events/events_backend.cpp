#include "backends/events/events_backend.hpp"

#include <utility>

#include "device/cuda_check.hpp"
#include "kscope/errors.hpp"
#include "kscope/metrics.hpp"

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
  return {{kEventsRegionDuration, "ns",
           "cudaEventElapsedTime between CUDA events recorded on the legacy default stream at "
           "region begin and end: one value per region, including launch latency and the gaps "
           "between its kernels (resolution about 0.5 us)"}};
}

// The legacy default stream orders against every blocking stream, so the events bracket the
// region's kernels whichever stream (or thread) launched them.
void EventsBackend::region_begin(const RegionContext& region) {
  while (intervals_.size() <= region.index) intervals_.emplace_back();
  check_cuda(cudaEventRecord(intervals_[region.index].start.get(), cudaStreamLegacy),
             "cudaEventRecord(region begin)");
}

void EventsBackend::region_end(const RegionContext& region) {
  check_cuda(cudaEventRecord(intervals_[region.index].stop.get(), cudaStreamLegacy),
             "cudaEventRecord(region end)");
}

void EventsBackend::end_run(const RunContext&, const std::vector<RegionRecord>& regions) {
  region_count_ = regions.size();
}

std::vector<RunMeasurement> EventsBackend::collect_batch() {
  if (region_count_ > intervals_.size()) {
    throw InternalError("events backend: a run of " + std::to_string(region_count_) + " regions recorded only " +
                        std::to_string(intervals_.size()) + " (kscope bug: please report it with this message)");
  }
  RunMeasurement measured(region_count_);
  for (std::size_t r = 0; r < region_count_; ++r) {
    check_cuda(cudaEventSynchronize(intervals_[r].stop.get()), "cudaEventSynchronize(region end)");
    float ms = 0;
    check_cuda(cudaEventElapsedTime(&ms, intervals_[r].start.get(), intervals_[r].stop.get()),
               "cudaEventElapsedTime");
    measured[r].push_back({std::string(), {static_cast<double>(ms) * 1e6}});
  }
  return {measured};
}

void EventsBackend::abandon_run(const RunContext&) noexcept {
  // Let the failed run's work finish so that its events are not read by the next run.
  cudaDeviceSynchronize();
}

}  // namespace kscope

#include "backends/events/events_backend.hpp"

#include <string>
#include <utility>

#include "backends/cupti_subscriber.hpp"
#include "core/model/log.hpp"
#include "device/cuda_check.hpp"
#include "kscope/errors.hpp"
#include "kscope/metrics.hpp"

namespace kscope {

using device::check_cuda;
using device::check_cupti;

namespace {
// cudaEventElapsedTime's resolution, as the CUDA runtime documents it ("around 0.5 microseconds").
constexpr double kEventResolutionNs = 500;
}  // namespace

EventsBackend::Event::Event() { check_cuda(cudaEventCreate(&event_), "cudaEventCreate"); }

EventsBackend::Event::~Event() {
  if (event_ != nullptr) cudaEventDestroy(event_);
}

EventsBackend::Event::Event(Event&& other) noexcept
    : event_(std::exchange(other.event_, nullptr)) {}

EventsBackend::EventsBackend(int device) : device_(device) {}

void EventsBackend::begin_session(const Settings& settings) {
  device_.begin_session(settings);
  order_.begin_session();
  const auto unordered = [](const std::string& why) {
    detail::log_warning(why + ", so the events backend cannot see which streams a region's work goes to: work on a "
                        "stream created with cudaStreamNonBlocking (a PyTorch side stream) is timed only where the "
                        "region joins it to the default stream before it ends");
  };
  try {
    subscriber_ = cupti::route_callbacks(&EventsBackend::on_callback, this);
    for (CUpti_CallbackId cbid : cupti::StreamOrder::callbacks())
      check_cupti(cuptiEnableCallback(1, subscriber_, CUPTI_CB_DOMAIN_DRIVER_API, cbid),
                  "cuptiEnableCallback(driver launch, copy, fill or stream destruction)");
  } catch (const cupti::OtherProfilerError&) {
    unordered("another profiler owns CUPTI in this process (ncu, nsys, torch.profiler, ...)");
  } catch (const BackendError& e) {
    end_session();
    unordered(std::string("CUPTI's driver callbacks are unavailable (") + e.what() + ")");
  }
}

void EventsBackend::end_session() noexcept {
  if (subscriber_)
    for (CUpti_CallbackId cbid : cupti::StreamOrder::callbacks())
      cuptiEnableCallback(0, subscriber_, CUPTI_CB_DOMAIN_DRIVER_API, cbid);
  subscriber_ = nullptr;
  order_.ungate();
}

void CUPTIAPI EventsBackend::on_callback(void* self, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                                         const void* data) {
  if (domain != CUPTI_CB_DOMAIN_DRIVER_API) return;
  auto& backend = *static_cast<EventsBackend*>(self);
  const auto& call = *static_cast<const CUpti_CallbackData*>(data);
  backend.order_.on_driver_call(cbid, call);
}

void EventsBackend::flush_cache() {
  order_.join();  // earlier work on the other streams ends before the flush
  device_.flush_l2(cudaStreamLegacy);
}

std::vector<MetricSpec> EventsBackend::metrics() const {
  return {{kEventsRegionDuration, "ns",
           "cudaEventElapsedTime between CUDA events recorded on the legacy default stream at "
           "region begin and end: one value per region, including launch latency and the gaps "
           "between its kernels, and any wait of the GPU for the host before its first work (HostGapNs "
           "says how long); resolution about 0.5 us"}};
}

// The legacy default stream orders against every blocking stream, and the stream order joins the
// others to it, so the events bracket the region's work whichever stream (or thread) launched it.
void EventsBackend::region_begin(const RegionContext& region) {
  while (intervals_.size() <= region.index) intervals_.emplace_back();
  Interval& interval = intervals_[region.index];
  order_.join();
  const cudaEvent_t start = interval.start.get();
  check_cuda(cudaEventRecord(start, cudaStreamLegacy), "cudaEventRecord(region begin)");
  order_.gate(start);
  order_.arm_first_work(start, interval.first.get());
}

void EventsBackend::region_end(const RegionContext& region) {
  Interval& interval = intervals_[region.index];
  interval.seen = order_.first_work();
  order_.join();
  check_cuda(cudaEventRecord(interval.stop.get(), cudaStreamLegacy), "cudaEventRecord(region end)");
  order_.ungate();
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
    const Interval& interval = intervals_[r];
    check_cuda(cudaEventElapsedTime(&ms, interval.start.get(), interval.stop.get()), "cudaEventElapsedTime");
    KernelMeasurement region{std::string(), {static_cast<double>(ms) * 1e6}};
    if (interval.seen) {
      float gap_ms = 0;
      if (interval.seen->gpu_waited)
        check_cuda(cudaEventElapsedTime(&gap_ms, interval.start.get(), interval.first.get()),
                   "cudaEventElapsedTime(region begin, first work)");
      // A wait within the events' resolution cannot be told from none.
      region.host_gap_ns = gap_ms * 1e6 > kEventResolutionNs ? static_cast<double>(gap_ms) * 1e6 : 0.0;
      region.first_work = interval.seen->call;
    }
    measured[r].push_back(std::move(region));
  }
  return {measured};
}

void EventsBackend::abandon_run(const RunContext&) noexcept {
  // Let the failed run's work finish so that its events are not read by the next run.
  order_.first_work();
  cudaDeviceSynchronize();
}

}  // namespace kscope

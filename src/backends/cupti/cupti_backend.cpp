#include "backends/cupti/cupti_backend.hpp"

#include <cupti.h>

#include <optional>
#include <utility>

#include "backends/counters/kept_profiler.hpp"
#include "backends/cupti/activity_tracer.hpp"
#include "base/elapsed.hpp"
#include "core/model/log.hpp"
#include "device/cuda_check.hpp"
#include "kscope/metrics.hpp"

namespace kscope {

using cupti::ActivityTracer;
using device::check_cuda;
using device::check_cupti;

CuptiBackend::CuptiBackend(int device) : device_(device) {}

CuptiBackend::~CuptiBackend() { end_session(); }

std::vector<MetricSpec> CuptiBackend::metrics() const {
  return {{kCuptiKernelDuration, "ns",
           "GPU end − start timestamps of each kernel from the CUPTI Activity API "
           "(CONCURRENT_KERNEL records; with replay_mode range, from the region's first kernel's "
           "start to its last kernel's end); not ncu's " + std::string(kGpuTimeDuration) +
               ", which is measured under kernel replay"}};
}

void CuptiBackend::begin_session(const Settings& settings) {
  // An enabled range profiler on the context can leave the activity records without timestamps.
  counters::release_kept_profiler();
  device_.begin_session(settings);
  order_.begin_session(calls_.observing());
  ActivityTracer::instance().begin_session(calls_.observing(), order_);
  session_open_ = true;
}

void CuptiBackend::end_session() noexcept {
  if (!session_open_) return;
  if (time_.collections > 0 && detail::log_enabled(detail::LogLevel::debug)) {
    using detail::as_milliseconds;
    detail::log_debug("cupti: " + std::to_string(time_.collections) + " collections: waiting for the GPU " +
                      as_milliseconds(time_.synchronize_s) + ", CUPTI's activity flush " +
                      as_milliseconds(time_.flush_s) + ", attributing the records " +
                      as_milliseconds(time_.attribute_s));
  }
  time_ = {};
  ActivityTracer::instance().end_session();
  session_open_ = false;
}

void CuptiBackend::flush_cache() {
  // The work enqueued before on streams that do not wait for the legacy one ends before the flush.
  order_.join();
  device_.flush_l2(cudaStreamLegacy, device::MeasuredDevice::FlushLaunch::graph);
  // Such streams' first calls from now on wait for the flush's end, so that none of the measured
  // work runs beside it; the legacy stream's own work and the blocking streams' wait for it anyway.
  // The host does not wait: the flush runs while it calls the function. A program that never used
  // such a stream pays nothing.
  order_.gate_after_flush();
}

void CuptiBackend::region_begin(const RegionContext& region) {
  ActivityTracer::instance().set_region(static_cast<std::int64_t>(region.index));
}

void CuptiBackend::region_end(const RegionContext&) { ActivityTracer::instance().set_region(-1); }

void CuptiBackend::end_run(const RunContext&, const std::vector<RegionRecord>& regions) {
  ActivityTracer::instance().end_run();
  ended_region_counts_.push_back(regions.size());
}

std::vector<RunMeasurement> CuptiBackend::collect_batch() {
  const std::vector<std::size_t> region_counts = std::exchange(ended_region_counts_, {});
  ++time_.collections;
  std::optional<detail::TimeInto> timed(time_.synchronize_s);
  // FlushAll does not wait for the GPU: kernels still running would have no record yet. After the
  // sync every record is complete, so the plain flush normally delivers them all; the forced one
  // (which also hands back buffers that CUPTI still considers open) is the fallback.
  check_cuda(cudaDeviceSynchronize(), "cudaDeviceSynchronize (end of run)");
  timed.emplace(time_.flush_s);
  check_cupti(cuptiActivityFlushAll(0), "cuptiActivityFlushAll");
  if (!ActivityTracer::instance().runs_complete()) {
    check_cupti(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED),
                "cuptiActivityFlushAll(FLUSH_FORCED)");
  }
  cupti::RunTrace trace = ActivityTracer::instance().take_runs();
  timed.emplace(time_.attribute_s);
  return cupti::measurements_of(std::move(trace), region_counts, kernel_names_);
}

void CuptiBackend::abandon_run(const RunContext&) noexcept {
  // Let the failed run's kernels finish and drain their records, so none reaches the next run;
  // the runs ended before it stay for collect_runs.
  ActivityTracer::instance().set_region(-1);
  cudaDeviceSynchronize();
  cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  ActivityTracer::instance().drop_run();
}

}  // namespace kscope

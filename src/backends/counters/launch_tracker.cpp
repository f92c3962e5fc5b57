#include "backends/counters/launch_tracker.hpp"

#include <cuda.h>
#include <cupti.h>  // with the driver entry points' parameter structs (generated_cuda_meta.h)

#include <algorithm>
#include <cstdlib>
#include <iterator>
#include <memory>

#include "backends/cupti_subscriber.hpp"
#include "device/cuda_check.hpp"

namespace kscope::counters {
namespace {

// The grid, block and dynamic shared memory of a kernel launch, from its entry point's parameters.
template <typename Params>
LaunchShape shape_from(const Params& p) {
  return {{p.gridDimX, p.gridDimY, p.gridDimZ}, {p.blockDimX, p.blockDimY, p.blockDimZ}, p.sharedMemBytes};
}

// Zeros for a graph launch: its kernels are not visible here.
LaunchShape shape_of(CUpti_CallbackId cbid, const void* params) {
  switch (cbid) {
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel:
      return shape_from(*static_cast<const cuLaunchKernel_params*>(params));
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz:
      return shape_from(*static_cast<const cuLaunchKernel_ptsz_params*>(params));
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel:
      return shape_from(*static_cast<const cuLaunchCooperativeKernel_params*>(params));
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz:
      return shape_from(*static_cast<const cuLaunchCooperativeKernel_ptsz_params*>(params));
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx:
      if (const CUlaunchConfig* c = static_cast<const cuLaunchKernelEx_params*>(params)->config) return shape_from(*c);
      break;
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz:
      if (const CUlaunchConfig* c = static_cast<const cuLaunchKernelEx_ptsz_params*>(params)->config)
        return shape_from(*c);
      break;
    default: break;
  }
  return {};
}

}  // namespace

void LaunchTracker::enable() {
  subscriber_ = cupti::route_callbacks(&LaunchTracker::on_callback, this);
  try {
    for (CUpti_CallbackId cbid : cupti::kLaunchCallbacks)
      device::check_cupti(cuptiEnableCallback(1, subscriber_, CUPTI_CB_DOMAIN_DRIVER_API, cbid),
                          "cuptiEnableCallback(driver launch)");
  } catch (...) {
    disable();
    throw;
  }
}

void LaunchTracker::disable() noexcept {
  if (!subscriber_) return;
  for (CUpti_CallbackId cbid : cupti::kLaunchCallbacks)
    cuptiEnableCallback(0, subscriber_, CUPTI_CB_DOMAIN_DRIVER_API, cbid);
  subscriber_ = nullptr;
  std::lock_guard lock(mutex_);
  recording_ = false;
  flushing_.reset();
  records_.clear();
}

void LaunchTracker::start_pass() {
  std::lock_guard lock(mutex_);
  records_.clear();
  recording_ = true;
}

void LaunchTracker::begin_flush() {
  std::lock_guard lock(mutex_);
  flushing_ = std::this_thread::get_id();
  if (recording_) records_.push_back({0, run_.load(std::memory_order_acquire), -1, "", false, true, {}});
}

void LaunchTracker::end_flush() {
  std::lock_guard lock(mutex_);
  flushing_.reset();
}

Launch LaunchTracker::launch_of(const Record& r) {
  const std::string name = r.flush ? "L2 flush" : r.graph ? "CUDA graph" : kernel_names_.of(r.mangled);
  return {r.run, r.region, name, r.graph, r.flush, r.shape};
}

std::size_t LaunchTracker::count(std::size_t run) {
  std::lock_guard lock(mutex_);
  return static_cast<std::size_t>(
      std::count_if(records_.begin(), records_.end(), [&](const Record& r) { return r.run == run; }));
}

std::vector<Launch> LaunchTracker::launches(std::size_t run) {
  std::vector<Record> records;
  {
    std::lock_guard lock(mutex_);
    std::copy_if(records_.begin(), records_.end(), std::back_inserter(records),
                 [&](const Record& r) { return r.run == run; });
  }
  std::vector<Launch> out;
  for (const auto& r : records) out.push_back(launch_of(r));
  return out;
}

std::vector<Launch> LaunchTracker::end_pass() {
  std::vector<Record> records;
  {
    std::lock_guard lock(mutex_);
    recording_ = false;
    records.swap(records_);
  }
  std::vector<Launch> out;
  for (const auto& r : records) out.push_back(launch_of(r));
  return out;
}

void CUPTIAPI LaunchTracker::on_callback(void* self, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                                         const void* data) {
  if (domain != CUPTI_CB_DOMAIN_DRIVER_API) return;
  auto& tracker = *static_cast<LaunchTracker*>(self);
  const auto* call = static_cast<const CUpti_CallbackData*>(data);
  std::lock_guard lock(tracker.mutex_);
  if (!tracker.recording_ || tracker.flushing_ == std::this_thread::get_id()) return;
  if (call->callbackSite == CUPTI_API_ENTER) {
    // One launch, one record, even if the driver reports it through nested entry points.
    const auto same = [&](const Record& r) { return !r.flush && r.correlation == call->correlationId; };
    if (std::any_of(tracker.records_.rbegin(), tracker.records_.rend(), same)) return;
    tracker.records_.push_back({call->correlationId, tracker.run_.load(std::memory_order_acquire),
                                tracker.region_.load(std::memory_order_acquire),
                                call->symbolName ? call->symbolName : "<unnamed kernel>",
                                cupti::is_graph_launch(cbid), false, shape_of(cbid, call->functionParams)});
  } else if (*static_cast<const CUresult*>(call->functionReturnValue) != CUDA_SUCCESS) {
    // A failed launch runs nothing, so the profiler has no range for it.
    auto& rs = tracker.records_;
    const auto failed = [&](const Record& r) { return !r.flush && r.correlation == call->correlationId; };
    rs.erase(std::remove_if(rs.begin(), rs.end(), failed), rs.end());
  }
}


}  // namespace kscope::counters

#include "backends/stream_order.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <exception>
#include <optional>
#include <string_view>

#include "backends/counters/driver_api.hpp"
#include "backends/cupti/memory_calls.hpp"
#include "backends/cupti_subscriber.hpp"
#include "device/cuda_check.hpp"
#include "kscope/errors.hpp"

namespace kscope::cupti {
namespace {

using device::check_cuda;

cudaStream_t stream_of(detail::StreamOps::Stream s) {
  return s == 0 ? cudaStreamLegacy : reinterpret_cast<cudaStream_t>(s);
}
cudaEvent_t event_of(detail::StreamOps::Event e) { return reinterpret_cast<cudaEvent_t>(e); }

template <class Params>
CUstream launch_stream(const void* params) {
  return static_cast<const Params*>(params)->hStream;
}

// The stream a kernel or graph launch is enqueued on; nullopt for a call that launches none or on
// several streams (a multi-device cooperative launch, whose streams the caller joins itself).
std::optional<CUstream> launch_stream(CUpti_CallbackId cbid, const void* params) {
  switch (cbid) {
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel: return launch_stream<cuLaunchKernel_params>(params);
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz: return launch_stream<cuLaunchKernel_ptsz_params>(params);
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx:
      return static_cast<const cuLaunchKernelEx_params*>(params)->config->hStream;
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz:
      return static_cast<const cuLaunchKernelEx_ptsz_params*>(params)->config->hStream;
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel:
      return launch_stream<cuLaunchCooperativeKernel_params>(params);
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz:
      return launch_stream<cuLaunchCooperativeKernel_ptsz_params>(params);
    case CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch: return launch_stream<cuGraphLaunch_params>(params);
    case CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch_ptsz: return launch_stream<cuGraphLaunch_ptsz_params>(params);
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchGridAsync: return launch_stream<cuLaunchGridAsync_params>(params);
    case CUPTI_DRIVER_TRACE_CBID_cuLaunch:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchGrid: return nullptr;  // the legacy stream
    default: return std::nullopt;
  }
}

// The call order's key of a stream handle as a driver call names it: the per-thread variants (_ptsz,
// _ptds) mean the calling thread's default stream by a null handle.
detail::CallOrder::Stream order_key(CUstream stream, const char* function) {
  const std::string_view name(function ? function : "");
  const bool per_thread_call = name.ends_with("_ptsz") || name.ends_with("_ptds");
  if (stream == CU_STREAM_PER_THREAD || (stream == nullptr && per_thread_call))
    return detail::CallOrder::per_thread_stream();
  if (stream == nullptr || stream == CU_STREAM_LEGACY) return 0;
  return reinterpret_cast<detail::CallOrder::Stream>(stream);
}

detail::CallOrder::Event event_key(CUevent event) { return reinterpret_cast<detail::CallOrder::Event>(event); }

template <class Params>
const Params& params_of(const CUpti_CallbackData& call) {
  return *static_cast<const Params*>(call.functionParams);
}

bool succeeded(const CUpti_CallbackData& call) {
  return call.callbackSite == CUPTI_API_EXIT && *static_cast<const CUresult*>(call.functionReturnValue) == CUDA_SUCCESS;
}

bool destroys_stream(CUpti_CallbackId cbid) {
  return cbid == CUPTI_DRIVER_TRACE_CBID_cuStreamDestroy || cbid == CUPTI_DRIVER_TRACE_CBID_cuStreamDestroy_v2;
}

// The legacy stream and the per-thread default streams (handle 0 means the latter in a _ptsz call)
// follow the legacy stream by definition: no need to ask the driver.
bool default_stream(CUstream stream) { return stream == nullptr || stream == CU_STREAM_LEGACY || stream == CU_STREAM_PER_THREAD; }

}  // namespace

bool CudaStreamOps::follows_legacy(Stream stream) {
  unsigned flags = 0;
  if (cudaStreamGetFlags(stream_of(stream), &flags) != cudaSuccess) return true;
  return (flags & cudaStreamNonBlocking) == 0;
}

bool CudaStreamOps::capturing(Stream stream) {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  return cudaStreamIsCapturing(stream_of(stream), &status) != cudaSuccess || status != cudaStreamCaptureStatusNone;
}

CudaStreamOps::Event CudaStreamOps::make_event() {
  cudaEvent_t event = nullptr;
  check_cuda(cudaEventCreateWithFlags(&event, cudaEventDisableTiming), "cudaEventCreateWithFlags(stream order)");
  return reinterpret_cast<Event>(event);
}

void CudaStreamOps::destroy_event(Event event) noexcept { cudaEventDestroy(event_of(event)); }

void CudaStreamOps::record(Event event, Stream stream) {
  check_cuda(cudaEventRecord(event_of(event), stream_of(stream)), "cudaEventRecord(stream order)");
}

void CudaStreamOps::wait(Stream stream, Event event) {
  check_cuda(cudaStreamWaitEvent(stream_of(stream), event_of(event), 0), "cudaStreamWaitEvent(stream order)");
}

const std::vector<CUpti_CallbackId>& StreamOrder::callbacks() {
  static const std::vector<CUpti_CallbackId> ids = [] {
    std::vector<CUpti_CallbackId> v(std::begin(kLaunchCallbacks), std::end(kLaunchCallbacks));
    v.insert(v.end(), std::begin(kDeprecatedLaunchCallbacks), std::end(kDeprecatedLaunchCallbacks));
    v.insert(v.end(), memory_callbacks().begin(), memory_callbacks().end());
    v.push_back(CUPTI_DRIVER_TRACE_CBID_cuStreamDestroy);
    v.push_back(CUPTI_DRIVER_TRACE_CBID_cuStreamDestroy_v2);
    return v;
  }();
  return ids;
}

const std::vector<CUpti_CallbackId>& StreamOrder::ordering_callbacks() {
  static const std::vector<CUpti_CallbackId> ids = {
      CUPTI_DRIVER_TRACE_CBID_cuEventRecord,          CUPTI_DRIVER_TRACE_CBID_cuEventRecord_ptsz,
      CUPTI_DRIVER_TRACE_CBID_cuEventRecordWithFlags, CUPTI_DRIVER_TRACE_CBID_cuEventRecordWithFlags_ptsz,
      CUPTI_DRIVER_TRACE_CBID_cuStreamWaitEvent,      CUPTI_DRIVER_TRACE_CBID_cuStreamWaitEvent_ptsz,
      CUPTI_DRIVER_TRACE_CBID_cuStreamSynchronize,    CUPTI_DRIVER_TRACE_CBID_cuStreamSynchronize_ptsz,
      CUPTI_DRIVER_TRACE_CBID_cuStreamQuery,          CUPTI_DRIVER_TRACE_CBID_cuStreamQuery_ptsz,
      CUPTI_DRIVER_TRACE_CBID_cuEventSynchronize,     CUPTI_DRIVER_TRACE_CBID_cuEventQuery,
      CUPTI_DRIVER_TRACE_CBID_cuCtxSynchronize,       CUPTI_DRIVER_TRACE_CBID_cuCtxSynchronize_v2,
  };
  return ids;
}

bool StreamOrder::orders_only(CUpti_CallbackId cbid) {
  const auto& ids = ordering_callbacks();
  return std::find(ids.begin(), ids.end(), cbid) != ids.end();
}

void StreamOrder::begin_session(bool observe_calls) {
  context_ = counters::current_context();
  observing_ = observe_calls;
  calls_.reset();
}

std::vector<detail::CallOrder::Id> StreamOrder::unjoined(std::uintptr_t caller_stream) {
  // evaluate() gives the caller's stream as a runtime handle: 0 the legacy default stream.
  const auto stream = reinterpret_cast<CUstream>(caller_stream);
  return calls_.unjoined(caller_stream == 0 ? 0 : order_key(stream, nullptr));
}

void StreamOrder::on_ordering_call(CUpti_CallbackId cbid, const CUpti_CallbackData& call) {
  const char* f = call.functionName;
  switch (cbid) {
    case CUPTI_DRIVER_TRACE_CBID_cuEventRecord:
    case CUPTI_DRIVER_TRACE_CBID_cuEventRecord_ptsz: {
      const auto& p = params_of<cuEventRecord_params>(call);  // the _ptsz parameters are the same
      if (call.callbackSite == CUPTI_API_ENTER) calls_.recorded(event_key(p.hEvent), order_key(p.hStream, f));
      return;
    }
    case CUPTI_DRIVER_TRACE_CBID_cuEventRecordWithFlags:
    case CUPTI_DRIVER_TRACE_CBID_cuEventRecordWithFlags_ptsz: {
      const auto& p = params_of<cuEventRecordWithFlags_params>(call);
      if (call.callbackSite == CUPTI_API_ENTER) calls_.recorded(event_key(p.hEvent), order_key(p.hStream, f));
      return;
    }
    case CUPTI_DRIVER_TRACE_CBID_cuStreamWaitEvent:
    case CUPTI_DRIVER_TRACE_CBID_cuStreamWaitEvent_ptsz: {
      const auto& p = params_of<cuStreamWaitEvent_params>(call);
      if (call.callbackSite == CUPTI_API_ENTER) calls_.waited(order_key(p.hStream, f), event_key(p.hEvent));
      return;
    }
    // The host's waits: once they returned (a query only when it found the work done).
    case CUPTI_DRIVER_TRACE_CBID_cuStreamSynchronize:
    case CUPTI_DRIVER_TRACE_CBID_cuStreamSynchronize_ptsz:
    case CUPTI_DRIVER_TRACE_CBID_cuStreamQuery:
    case CUPTI_DRIVER_TRACE_CBID_cuStreamQuery_ptsz:
      if (succeeded(call)) calls_.host_waited(order_key(params_of<cuStreamSynchronize_params>(call).hStream, f));
      return;
    case CUPTI_DRIVER_TRACE_CBID_cuEventSynchronize:
    case CUPTI_DRIVER_TRACE_CBID_cuEventQuery:
      if (succeeded(call)) calls_.host_waited_for(event_key(params_of<cuEventSynchronize_params>(call).hEvent));
      return;
    case CUPTI_DRIVER_TRACE_CBID_cuCtxSynchronize:
    case CUPTI_DRIVER_TRACE_CBID_cuCtxSynchronize_v2:
      if (succeeded(call)) calls_.host_waited_all();
      return;
    default:
      return;
  }
}

void StreamOrder::on_driver_call(CUpti_CallbackId cbid, const CUpti_CallbackData& call, bool capturing) noexcept {
  if (call.context != context_) return;
  if (orders_only(cbid)) {
    // A capture's records and waits are its graph's edges: they run nothing now.
    if (!observing_ || capturing || (!call.functionParams && cbid != CUPTI_DRIVER_TRACE_CBID_cuCtxSynchronize))
      return;
    try {
      on_ordering_call(cbid, call);
    } catch (...) {  // out of memory: the call order is incomplete, and the marker still times the call's end
    }
    return;
  }
  // Before the call: a wait must be enqueued ahead of the work it holds back, and a stream's work
  // recorded before the stream goes.
  if (call.callbackSite != CUPTI_API_ENTER || !call.functionParams) return;
  try {
    if (destroys_stream(cbid)) {
      const CUstream stream = static_cast<const cuStreamDestroy_v2_params*>(call.functionParams)->hStream;
      if (!default_stream(stream)) join_.stream_destroyed(reinterpret_cast<detail::StreamOps::Stream>(stream));
      return;
    }
    std::optional<CUstream> stream = launch_stream(cbid, call.functionParams);
    if (!stream) stream = memory_call_stream(cbid, call.functionParams);
    if (stream && observing_ && !capturing) calls_.enqueued(order_key(*stream, call.functionName), call.correlationId);
    if (stream && !default_stream(*stream)) join_.before_call(reinterpret_cast<detail::StreamOps::Stream>(*stream));
  } catch (...) {
    std::lock_guard lock(mutex_);
    if (failure_.empty()) {
      try {
        std::rethrow_exception(std::current_exception());
      } catch (const std::exception& e) {
        failure_ = std::string("keeping ") + call.functionName +
                   " in order with kscope's work on the legacy default stream: " + e.what();
      }
    }
  }
}

void StreamOrder::check() {
  std::lock_guard lock(mutex_);
  if (!failure_.empty()) throw CudaError(failure_);
}

void StreamOrder::gate(cudaEvent_t event) {
  check();
  join_.gate(reinterpret_cast<detail::StreamOps::Event>(event));
}

void StreamOrder::gate_after_flush() {
  check();
  join_.gate_after_legacy();
}

void StreamOrder::join() {
  check();
  join_.join();
}

}  // namespace kscope::cupti

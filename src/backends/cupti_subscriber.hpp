#pragma once
// The one CUPTI subscriber of the process, shared by kscope's CUPTI backends (cupti, counters).
// CUPTI serves a single subscriber per process and refuses a second cuptiSubscribe even from the
// same tool, so the subscription is made once and kept; each backend routes the callbacks to
// itself when its session begins, enables the callbacks it needs, and disables them at its end.
#include <cupti.h>

#include <cstddef>
#include <string>

#include "kscope/errors.hpp"

namespace kscope::cupti {

// Another tool (ncu, nsys, compute-sanitizer, torch.profiler, ...) owns CUPTI in this process.
class OtherProfilerError : public BackendError {
 public:
  using BackendError::BackendError;
};

// Every driver entry point that launches kernels. Counting at the driver level sees runtime,
// Triton, CuPy and JAX launches alike, each once (runtime launches sit on top of these).
inline constexpr CUpti_CallbackId kLaunchCallbacks[] = {
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch,
    CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch_ptsz,
};

// The deprecated entry points that launch kernels too. The cupti backend traces them while
// evaluate() observes calls, so that no kernel of a call escapes its timing.
inline constexpr CUpti_CallbackId kDeprecatedLaunchCallbacks[] = {
    CUPTI_DRIVER_TRACE_CBID_cuLaunch,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchGrid,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchGridAsync,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernelMultiDevice,
};

// Stream capture's begin and end: a launch, copy or fill made into a capture runs nothing then (a
// graph launch of it later does), so it yields no activity record of its own.
inline constexpr CUpti_CallbackId kCaptureBeginCallbacks[] = {
    CUPTI_DRIVER_TRACE_CBID_cuStreamBeginCapture,        CUPTI_DRIVER_TRACE_CBID_cuStreamBeginCapture_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuStreamBeginCapture_v2,     CUPTI_DRIVER_TRACE_CBID_cuStreamBeginCapture_v2_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuStreamBeginCaptureToGraph, CUPTI_DRIVER_TRACE_CBID_cuStreamBeginCaptureToGraph_ptsz,
};
inline constexpr CUpti_CallbackId kCaptureEndCallbacks[] = {
    CUPTI_DRIVER_TRACE_CBID_cuStreamEndCapture,
    CUPTI_DRIVER_TRACE_CBID_cuStreamEndCapture_ptsz,
};

// +1 for a call that begins a stream capture, -1 for one that ends it, 0 for any other call.
inline int capture_step(CUpti_CallbackId cbid) {
  for (CUpti_CallbackId begin : kCaptureBeginCallbacks)
    if (cbid == begin) return 1;
  for (CUpti_CallbackId end : kCaptureEndCallbacks)
    if (cbid == end) return -1;
  return 0;
}

inline bool is_graph_launch(CUpti_CallbackId cbid) {
  return cbid == CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch || cbid == CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch_ptsz;
}

using CallbackFunction = void (*)(void* userdata, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                                  const void* data);

// cuptiSubscribe_v2's parameters under `name`, with room for the name of the tool that owns CUPTI
// when the call is refused.
struct SubscriberParams {
  explicit SubscriberParams(const char* name) {
    params.structSize = CUpti_SubscriberParams_STRUCT_SIZE;
    params.subscriberName = name;
    params.oldSubscriberName = owner;
    params.oldSubscriberSize = CUPTI_OLD_SUBSCRIBER_NAME_MIN_LEN;
  }
  SubscriberParams(const SubscriberParams&) = delete;  // params point into owner
  SubscriberParams& operator=(const SubscriberParams&) = delete;

  char owner[CUPTI_OLD_SUBSCRIBER_NAME_MIN_LEN + 1] = {};
  CUpti_SubscriberParams params{};
};

// The process's subscriber, made on the first call. CUPTI wants it before any other CUPTI call.
// Throws OtherProfilerError, naming the tool, when another tool owns CUPTI.
CUpti_SubscriberHandle subscriber();

// subscriber(), then delivers every callback to fn(userdata, ...) until the next
// call.
CUpti_SubscriberHandle route_callbacks(CallbackFunction fn, void* userdata);

// Calls `hook` when a CUDA context is about to be destroyed, whichever backend the callbacks are
// routed to (registered once, kept for the process; a second hook replaces the first).
using ContextHook = void (*)(CUcontext) noexcept;
void on_context_destroyed(ContextHook hook);

// Calls `hook` with each module's cubin as it loads, whichever backend the callbacks are routed to
// (registered once, kept for the process, as on_context_destroyed).
using ModuleHook = void (*)(const void* cubin, std::size_t size) noexcept;
void on_module_loaded(ModuleHook hook);

// The message for CUPTI owned by `other` (empty: unknown) when `call` failed because of it.
std::string other_profiler_message(const std::string& call, const std::string& other);

}  // namespace kscope::cupti

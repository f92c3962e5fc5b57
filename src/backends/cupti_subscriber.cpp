#include "backends/cupti_subscriber.hpp"

#include <mutex>

#include "core/model/backend_choice.hpp"
#include "device/cuda_check.hpp"

namespace kscope::cupti {
namespace {

struct Route {
  CallbackFunction fn = nullptr;
  void* userdata = nullptr;
};

// Never destroyed: CUPTI may call back while the process exits, after static destructors ran.
struct Subscription {
  std::mutex mutex;
  CUpti_SubscriberHandle handle = nullptr;
  Route route;
  ContextHook context_destroyed = nullptr;
  ModuleHook module_loaded = nullptr;
};

Subscription& subscription() {
  static auto* s = new Subscription;
  return *s;
}

void CUPTIAPI dispatch(void*, CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* data) {
  Route route;
  ContextHook context_destroyed = nullptr;
  ModuleHook module_loaded = nullptr;
  {
    std::lock_guard lock(subscription().mutex);
    route = subscription().route;
    context_destroyed = subscription().context_destroyed;
    module_loaded = subscription().module_loaded;
  }
  if (domain == CUPTI_CB_DOMAIN_RESOURCE) {
    const auto* resource = static_cast<const CUpti_ResourceData*>(data);
    if (cbid == CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING && context_destroyed) context_destroyed(resource->context);
    if (cbid == CUPTI_CBID_RESOURCE_MODULE_LOADED && module_loaded)
      if (const auto* module = static_cast<const CUpti_ModuleResourceData*>(resource->resourceDescriptor))
        module_loaded(module->pCubin, module->cubinSize);
    return;
  }
  // Called outside the lock: a callback may itself take locks that route_callbacks' callers hold.
  if (route.fn) route.fn(route.userdata, domain, cbid, data);
}

}  // namespace

std::string other_profiler_message(const std::string& call, const std::string& other) {
  return call + " failed: another profiler (" + (other.empty() ? std::string("unknown tool") : other) +
         ") owns CUPTI in this process, and CUPTI serves one client per process, so kscope's in-process "
         "backends cupti and counters cannot run beside it. Run without the other tool (ncu, nsys, "
         "compute-sanitizer, cuda-gdb, torch.profiler/kineto, Triton Proton), or use " +
         detail::backend_choice(Backend::events) + ", which needs no CUPTI";
}

CUpti_SubscriberHandle subscriber() {
  Subscription& s = subscription();
  std::lock_guard lock(s.mutex);
  if (!s.handle) {
    SubscriberParams request("kscope");
    const CUptiResult status = cuptiSubscribe_v2(&s.handle, &dispatch, nullptr, &request.params);
    if (status == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED || status == CUPTI_ERROR_DISABLED) {
      s.handle = nullptr;
      throw OtherProfilerError(other_profiler_message("cuptiSubscribe_v2", request.owner));
    }
    device::check_cupti(status, "cuptiSubscribe_v2");
  }
  return s.handle;
}

namespace {

// Keeps `hook` in its slot for the process and enables its resource callback.
template <typename Hook>
void install(Hook Subscription::*slot, Hook hook, CUpti_CallbackId cbid, const char* call) {
  CUpti_SubscriberHandle handle = subscriber();
  {
    std::lock_guard lock(subscription().mutex);
    if (subscription().*slot == hook) return;
    subscription().*slot = hook;
  }
  device::check_cupti(cuptiEnableCallback(1, handle, CUPTI_CB_DOMAIN_RESOURCE, cbid), call);
}

}  // namespace

void on_context_destroyed(ContextHook hook) {
  install(&Subscription::context_destroyed, hook, CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING,
          "cuptiEnableCallback(context destroyed)");
}

void on_module_loaded(ModuleHook hook) {
  install(&Subscription::module_loaded, hook, CUPTI_CBID_RESOURCE_MODULE_LOADED, "cuptiEnableCallback(module loaded)");
}

CUpti_SubscriberHandle route_callbacks(CallbackFunction fn, void* userdata) {
  CUpti_SubscriberHandle handle = subscriber();
  std::lock_guard lock(subscription().mutex);
  subscription().route = Route{fn, userdata};
  return handle;
}

}  // namespace kscope::cupti

// CUPTI: whether it loads, its version, whether another tool already holds its single subscriber
// slot, and whether the hardware counters can be read (a one-metric range-profiler session).
#include <cupti.h>
#include <dlfcn.h>

#include "backends/counters/counter_errors.hpp"
#include "backends/counters/driver_api.hpp"
#include "backends/counters/kept_profiler.hpp"
#include "backends/counters/profiler_host.hpp"
#include "backends/counters/range_profiler.hpp"
#include "backends/cupti_subscriber.hpp"
#include "doctor/shared_library.hpp"
#include "doctor/system_probes.hpp"
#include "kscope/metrics.hpp"

namespace kscope::doctor {
namespace {

void CUPTIAPI ignore_callback(void*, CUpti_CallbackDomain, CUpti_CallbackId, const void*) {}

// Gives CUPTI's slot back at once: holding it would lock out the user's own profiler.
class Subscription {
 public:
  Subscription(decltype(&cuptiUnsubscribe) unsubscribe, CUpti_SubscriberHandle handle)
      : unsubscribe_(unsubscribe), handle_(handle) {}
  ~Subscription() { unsubscribe_(handle_); }
  Subscription(const Subscription&) = delete;
  Subscription& operator=(const Subscription&) = delete;

 private:
  decltype(&cuptiUnsubscribe) unsubscribe_;
  CUpti_SubscriberHandle handle_;
};

std::string result_name(const SharedLibrary& library, CUptiResult rc) {
  const auto to_string = library.symbol<decltype(&cuptiGetResultString)>("cuptiGetResultString");
  const char* name = nullptr;
  if (to_string == nullptr || to_string(rc, &name) != CUPTI_SUCCESS || name == nullptr) name = "unknown CUPTI error";
  return std::string(name) + " (" + std::to_string(static_cast<int>(rc)) + ")";
}

}  // namespace

CuptiFacts SystemProbes::cupti() {
  CuptiFacts f;
  // The CUPTI of the CUDA 13 toolkit kscope is built with (already loaded when kscope links it).
  const SharedLibrary library("libcupti.so.13", RTLD_NOW | RTLD_LOCAL);
  if (!library) {
    f.problem = "libcupti.so.13 could not be loaded (" + library.error() + ")";
    return f;
  }
  const auto get_version = library.symbol<decltype(&cuptiGetVersion)>("cuptiGetVersion");
  const auto subscribe = library.symbol<decltype(&cuptiSubscribe_v2)>("cuptiSubscribe_v2");
  const auto unsubscribe = library.symbol<decltype(&cuptiUnsubscribe)>("cuptiUnsubscribe");
  if (get_version == nullptr || subscribe == nullptr || unsubscribe == nullptr) {
    f.problem = "libcupti.so.13 lacks cuptiGetVersion, cuptiSubscribe_v2 or cuptiUnsubscribe (CUPTI older than 13.0)";
    return f;
  }
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(get_version), &info) != 0 && info.dli_fname) f.path = info.dli_fname;
  uint32_t version = 0;
  if (const CUptiResult rc = get_version(&version); rc != CUPTI_SUCCESS) {
    f.problem = "cuptiGetVersion failed: " + result_name(library, rc);
    return f;
  }
  f.version = version;

  cupti::SubscriberParams request("kscope doctor");
  CUpti_SubscriberHandle handle = nullptr;
  const CUptiResult rc = subscribe(&handle, &ignore_callback, nullptr, &request.params);
  if (rc == CUPTI_SUCCESS) {
    const Subscription release(unsubscribe, handle);
  } else if (rc == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED || rc == CUPTI_ERROR_DISABLED) {
    f.owner = request.owner[0] != '\0' ? request.owner : "an unnamed tool";
  } else {
    f.subscribe_problem = "cuptiSubscribe_v2 failed: " + result_name(library, rc);
  }
  return f;
}

CounterFacts SystemProbes::counters(const std::string& skip_reason) {
  const counters::AccessFacts access = counters::read_access_facts();
  CounterFacts f{access.admin_only, access.root, false, skip_reason};
  if (!skip_reason.empty()) return f;
  f.probed = true;
  // The counter backend's own steps for one metric on device 0, up to enabling the range
  // profiler: the call that fails without counter permission. No kernel runs.
  try {
    const std::string chip = counters::chip_of_device(0);
    const CUcontext context = counters::current_context();
    counters::require_profiling_support(counters::device_handle(0), "device #0");
    counters::release_kept_profiler();  // one range profiler per context: a counters call may have left one
    const auto config = std::make_shared<const counters::MetricConfig>(chip, std::vector<std::string>{kGpuTimeDuration},
                                                                       counters::counter_availability(context));
    const counters::RangeProfiler profiler(context, config, counters::RangeKind::per_kernel, 1);
  } catch (const std::exception& e) {
    f.problem = e.what();
  }
  return f;
}

}  // namespace kscope::doctor

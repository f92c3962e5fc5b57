#include "backends/counters/counter_errors.hpp"

#include <unistd.h>

#include <fstream>
#include <regex>
#include <sstream>

#include "backends/cupti_subscriber.hpp"
#include "core/model/backend_choice.hpp"
#include "core/model/caller_language.hpp"
#include "device/cuda_check.hpp"
#include "kscope/errors.hpp"

namespace kscope::counters {
namespace {

std::string timing_still_works() {
  using detail::backend_choice;
  return backend_choice(Backend::cupti) + " and " + backend_choice(Backend::events) +
         " measure kernel durations without counters, and " + backend_choice(Backend::automatic) +
         " falls back to them; with the bytes and FLOPs each kernel must move and do (" + detail::option("work") +
         "), their rows say how close it comes to the memory and compute roofs and whether it is memory-, compute- "
         "or latency-bound (docs/roofline.md, \"Why is it slow, without counters\")";
}

std::string failed(CUptiResult status, const std::string& call) {
  const char* name = nullptr;
  if (cuptiGetResultString(status, &name) != CUPTI_SUCCESS || name == nullptr) name = "unknown CUPTI error";
  return call + " failed: " + name + " (" + std::to_string(static_cast<int>(status)) + "). ";
}

std::string permission_message(const AccessFacts& facts) {
  std::string why;
  if (facts.admin_only == true) {
    why = facts.root ? "/proc/driver/nvidia/params shows RmProfilingAdminOnly: 1, and although this process runs as "
                       "root it lacks the capability (a container without SYS_ADMIN). "
                     : "/proc/driver/nvidia/params shows RmProfilingAdminOnly: 1 and this process is not root. ";
  } else if (facts.admin_only == false) {
    why = "/proc/driver/nvidia/params shows RmProfilingAdminOnly: 0, so the restriction comes from the "
          "environment (a container without SYS_ADMIN, or a hypervisor). ";
  } else {
    why = "(/proc/driver/nvidia/params could not be read to check RmProfilingAdminOnly.) ";
  }
  return "GPU performance counters are restricted to administrators on this machine (ERR_NVGPUCTRPERM; "
         "NVIDIA driver option NVreg_RestrictProfilingToAdminUsers=1). " + why +
         "Fixes: run as root (sudo); or have an admin put 'options nvidia NVreg_RestrictProfilingToAdminUsers=0' "
         "in a file in /etc/modprobe.d/, rebuild the initramfs if the distribution needs it, and reboot (or reload "
         "the nvidia modules); in Docker start the container with --cap-add=SYS_ADMIN (or --privileged), in "
         "Kubernetes add SYS_ADMIN to securityContext.capabilities. Many hosted GPU services do not allow any of "
         "this. " + timing_still_works() + ". See https://developer.nvidia.com/ERR_NVGPUCTRPERM";
}

std::string platform(const char* what) {
  return std::string("GPU performance counters are not available ") + what + ". " + timing_still_works();
}

}  // namespace

std::optional<bool> parse_admin_only(const std::string& params_text) {
  static const std::regex line(R"((^|\n)RmProfilingAdminOnly:\s*(\d+))");
  std::smatch m;
  if (!std::regex_search(params_text, m, line)) return std::nullopt;
  return m[2].str() != "0";
}

AccessFacts read_access_facts() {
  AccessFacts facts;
  facts.root = geteuid() == 0;
  std::ifstream in("/proc/driver/nvidia/params");
  if (in) {
    std::stringstream text;
    text << in.rdbuf();
    facts.admin_only = parse_admin_only(text.str());
  }
  return facts;
}

std::string counter_error_message(CUptiResult status, const std::string& call, const AccessFacts& facts) {
  switch (status) {
    case CUPTI_ERROR_INSUFFICIENT_PRIVILEGES:
      return failed(status, call) + permission_message(facts);
    case CUPTI_ERROR_VIRTUALIZED_DEVICE_INSUFFICIENT_PRIVILEGES:
      return failed(status, call) +
             "The hypervisor has not enabled profiling for this vGPU: an administrator must set the vGPU plugin "
             "parameter enable_profiling=1 for this VM. " + timing_still_works();
    case CUPTI_ERROR_VIRTUALIZED_DEVICE_NOT_SUPPORTED:
      return failed(status, call) + platform("on this virtualised GPU (vGPU or passthrough without profiling support)");
    case CUPTI_ERROR_CONFIDENTIAL_COMPUTING_NOT_SUPPORTED:
      return failed(status, call) + platform("while confidential computing is enabled on this GPU");
    case CUPTI_ERROR_CMP_DEVICE_NOT_SUPPORTED:
      return failed(status, call) + platform("on CMP (crypto mining processor) devices");
    case CUPTI_ERROR_MIG_DEVICE_NOT_SUPPORTED:
      return failed(status, call) +
             platform("on this MIG configuration (only a compute instance that owns its whole GPU instance can be "
                      "profiled)");
    case CUPTI_ERROR_SLI_DEVICE_NOT_SUPPORTED:
      return failed(status, call) + platform("while SLI is enabled");
    case CUPTI_ERROR_WSL_DEVICE_NOT_SUPPORTED:
      return failed(status, call) + platform("under this WSL version (update WSL and the Windows NVIDIA driver)");
    case CUPTI_ERROR_NOT_SUPPORTED:
      return failed(status, call) + platform("on this device or platform");
    case CUPTI_ERROR_HARDWARE_BUSY:
      return failed(status, call) +
             "The GPU's performance monitor is reserved by another client: DCGM profiling (pause it with 'dcgmi "
             "profile --pause') or another process profiling this GPU (ncu, nsys, another kscope). Wait for it or "
             "stop it. " + timing_still_works();
    default:
      return {};
  }
}

void check_counters(CUptiResult status, const char* call) {
  if (status == CUPTI_SUCCESS) return;
  if (status == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED || status == CUPTI_ERROR_DISABLED)
    throw cupti::OtherProfilerError(cupti::other_profiler_message(call, ""));
  if (std::string message = counter_error_message(status, call, read_access_facts()); !message.empty())
    throw BackendError(message);
  device::check_cupti(status, call);
}

std::string device_support_problem(const CUpti_Profiler_DeviceSupported_Params& s, const std::string& gpu) {
  if (s.isSupported == CUPTI_PROFILER_CONFIGURATION_SUPPORTED) return {};
  std::string reasons;
  const auto add = [&](CUpti_Profiler_Support_Level level, const std::string& why) {
    if (level != CUPTI_PROFILER_CONFIGURATION_SUPPORTED) reasons += (reasons.empty() ? "" : "; ") + why;
  };
  add(s.architecture, "its architecture is older than the range profiler needs (compute capability 7.5 or newer)");
  add(s.sli, "SLI is enabled (disable SLI)");
  add(s.vGpu, s.vGpu == CUPTI_PROFILER_CONFIGURATION_DISABLED
                  ? "it is a vGPU whose profiling the hypervisor has disabled (an administrator must set the vGPU "
                    "plugin parameter enable_profiling=1)"
                  : "it is a virtualised GPU without profiling support");
  add(s.confidentialCompute, "confidential computing is enabled");
  add(s.cmp, "it is a CMP (crypto mining processor) device");
  add(s.wsl, "this WSL version does not support profiling (update WSL and the Windows NVIDIA driver)");
  if (reasons.empty()) reasons = "CUPTI could not determine why";
  return "GPU performance counters cannot be read on " + gpu +
         " (cuptiProfilerDeviceSupported): " + reasons + ". " + timing_still_works();
}

}  // namespace kscope::counters

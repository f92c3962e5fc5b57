#pragma once
// What the counter backend says when the GPU's performance counters cannot be read: permission
// (ERR_NVGPUCTRPERM), a virtualised or unsupported device, or another profiler owning CUPTI —
// each with what fixes it. The texts are built from plain facts so they can be tested without a GPU.
#include <cupti_profiler_target.h>
#include <cupti_result.h>

#include <optional>
#include <string>

namespace kscope::counters {

// The machine facts that decide counter access, read when a call has failed.
struct AccessFacts {
  std::optional<bool> admin_only;  // RmProfilingAdminOnly in /proc/driver/nvidia/params; nullopt if unreadable
  bool root = false;               // effective uid 0
};

AccessFacts read_access_facts();
// The RmProfilingAdminOnly value in the text of /proc/driver/nvidia/params.
std::optional<bool> parse_admin_only(const std::string& params_text);

// The message for a counter-specific failure of `call` (permission, virtualisation, platform,
// busy hardware); empty for other codes, which device::check_cupti words.
std::string counter_error_message(CUptiResult status, const std::string& call, const AccessFacts& facts);

// Throws unless status is CUPTI_SUCCESS: cupti::OtherProfilerError when another tool owns CUPTI,
// BackendError otherwise.
void check_counters(CUptiResult status, const char* call);

// Empty when cuptiProfilerDeviceSupported reported range profiling supported, otherwise what is
// unsupported and what to do.
std::string device_support_problem(const CUpti_Profiler_DeviceSupported_Params& support, const std::string& gpu);

}  // namespace kscope::counters

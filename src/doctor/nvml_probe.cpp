// NVML, reached through dlopen (no nvml.h in the toolkit: the library comes with the driver). Only
// getters are called; clock-lock permission is read from the API restriction, never tried.
#include "doctor/shared_library.hpp"
#include "doctor/system_probes.hpp"

namespace kscope::doctor {
namespace {

// The C ABI of the few entry points used (nvmlReturn_t and the enums are ints; 0 = NVML_SUCCESS).
using Device = struct nvmlDevice_st*;
constexpr int kClockSm = 1;                        // NVML_CLOCK_SM
constexpr int kClockMemory = 2;                    // NVML_CLOCK_MEM
constexpr int kRestrictedApplicationClocks = 0;    // NVML_RESTRICTED_API_SET_APPLICATION_CLOCKS
constexpr int kFeatureEnabled = 1;                 // NVML_FEATURE_ENABLED: only root may call it

// nvmlInit_v2 on construction, nvmlShutdown on destruction (NVML counts them, so kscope's own
// telemetry, initialised elsewhere in the process, is unaffected).
class NvmlSession {
 public:
  explicit NvmlSession(const SharedLibrary& library)
      : shutdown_(library.symbol<int (*)()>("nvmlShutdown")),
        error_string_(library.symbol<const char* (*)(int)>("nvmlErrorString")) {
    const auto init = library.symbol<int (*)()>("nvmlInit_v2");
    if (init == nullptr) {
      problem_ = "libnvidia-ml.so.1 has no nvmlInit_v2 (driver too old)";
      return;
    }
    if (const int rc = init(); rc != 0) {
      problem_ = "nvmlInit_v2 failed: " + error(rc);
      return;
    }
    initialised_ = true;
  }
  ~NvmlSession() {
    if (initialised_ && shutdown_ != nullptr) shutdown_();
  }
  NvmlSession(const NvmlSession&) = delete;
  NvmlSession& operator=(const NvmlSession&) = delete;

  const std::string& problem() const { return problem_; }
  std::string error(int rc) const {
    const char* text = error_string_ ? error_string_(rc) : nullptr;
    return std::string(text ? text : "unknown error") + " (NVML error " + std::to_string(rc) + ")";
  }

 private:
  int (*shutdown_)();
  const char* (*error_string_)(int);
  bool initialised_ = false;
  std::string problem_;
};

}  // namespace

NvmlFacts SystemProbes::nvml(std::vector<DoctorDevice>& devices) {
  NvmlFacts f;
  const SharedLibrary library("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!library) {
    f.problem = "libnvidia-ml.so.1 could not be loaded (" + library.error() + "); it comes with the NVIDIA driver";
    return f;
  }
  const NvmlSession session(library);
  if (!session.problem().empty()) {
    f.problem = session.problem();
    return f;
  }
  if (const auto version = library.symbol<int (*)(char*, unsigned)>("nvmlSystemGetDriverVersion")) {
    char text[96] = {};
    if (version(text, sizeof text) == 0) f.driver_version = text;
  }
  const auto by_uuid = library.symbol<int (*)(const char*, Device*)>("nvmlDeviceGetHandleByUUID");
  const auto max_clock = library.symbol<int (*)(Device, int, unsigned*)>("nvmlDeviceGetMaxClockInfo");
  const auto restriction = library.symbol<int (*)(Device, int, int*)>("nvmlDeviceGetAPIRestriction");
  for (DoctorDevice& d : devices) {
    Device device = nullptr;
    if (by_uuid == nullptr) {
      d.nvml_problem = "libnvidia-ml.so.1 has no nvmlDeviceGetHandleByUUID (driver too old)";
      continue;
    }
    if (const int rc = by_uuid(d.uuid.c_str(), &device); rc != 0) {
      d.nvml_problem = "nvmlDeviceGetHandleByUUID(" + d.uuid + ") failed: " + session.error(rc);
      continue;
    }
    unsigned mhz = 0;
    if (max_clock && max_clock(device, kClockSm, &mhz) == 0) d.rated_sm_clock_mhz = mhz;
    if (max_clock && max_clock(device, kClockMemory, &mhz) == 0) d.rated_memory_clock_mhz = mhz;
    int state = 0;
    if (restriction && restriction(device, kRestrictedApplicationClocks, &state) == 0)
      d.clocks_restricted_to_root = state == kFeatureEnabled;
  }
  return f;
}

}  // namespace kscope::doctor

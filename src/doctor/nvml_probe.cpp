// NVML through kscope's own loader (device/nvml.hpp). Only getters are called; clock-lock
// permission is read from the API restriction, never tried.
#include "device/nvml.hpp"
#include "doctor/system_probes.hpp"
#include "kscope/errors.hpp"

namespace kscope::doctor {
namespace {

using device::NvmlApi;

// nvml.h values.
constexpr int kRestrictedApplicationClocks = 0;    // NVML_RESTRICTED_API_SET_APPLICATION_CLOCKS
constexpr int kFeatureEnabled = 1;                 // NVML_FEATURE_ENABLED: only root may call it

// Reads the energy counter once through the energy metrics' own reader, so that a failure is
// reported as they would report it.
void read_energy_counter(const NvmlApi& api, NvmlApi::Device device, DoctorDevice& d) {
  const std::string reachable;  // the device was found: no reason it is unreachable
  try {
    device::NvmlEnergyCounter(api, device, reachable).read();
    d.energy_counter_readable = true;
  } catch (const BackendError& e) {
    d.energy_counter_readable = false;
    d.energy_counter_problem = e.what();
  }
}

}  // namespace

NvmlFacts SystemProbes::nvml(std::vector<DoctorDevice>& devices) { return nvml_facts(device::nvml(), devices); }

NvmlFacts nvml_facts(const NvmlApi& api, std::vector<DoctorDevice>& devices) {
  NvmlFacts f;
  if (!api.unavailable_reason.empty()) {
    f.problem = api.unavailable_reason;
    return f;
  }
  f.driver_version = device::driver_version(api);
  for (DoctorDevice& d : devices) {
    NvmlApi::Device device = nullptr;
    if (api.device_get_handle_by_uuid == nullptr) {
      d.nvml_problem = "libnvidia-ml.so.1 has no nvmlDeviceGetHandleByUUID (driver too old)";
      continue;
    }
    if (const int rc = api.device_get_handle_by_uuid(d.uuid.c_str(), &device); rc != 0) {
      d.nvml_problem = "nvmlDeviceGetHandleByUUID(" + d.uuid + ") failed: " + api.error(rc);
      continue;
    }
    if (api.device_get_max_clock_info) {
      unsigned mhz = 0;
      if (api.device_get_max_clock_info(device, NvmlApi::kClockSm, &mhz) == 0) d.rated_sm_clock_mhz = mhz;
      if (api.device_get_max_clock_info(device, NvmlApi::kClockMemory, &mhz) == 0) d.rated_memory_clock_mhz = mhz;
    }
    int state = 0;
    if (api.device_get_api_restriction &&
        api.device_get_api_restriction(device, kRestrictedApplicationClocks, &state) == 0)
      d.clocks_restricted_to_root = state == kFeatureEnabled;
    read_energy_counter(api, device, d);
  }
  return f;
}

}  // namespace kscope::doctor

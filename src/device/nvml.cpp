#include "device/nvml.hpp"

#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>

#include "kscope/errors.hpp"

namespace kscope::device {
namespace {

// nvml.h values.
constexpr int kNotSupported = 3;     // NVML_ERROR_NOT_SUPPORTED
constexpr int kNoPermission = 4;     // NVML_ERROR_NO_PERMISSION
constexpr int kNotFound = 6;         // NVML_ERROR_NOT_FOUND
constexpr int kInsufficientSize = 7; // NVML_ERROR_INSUFFICIENT_SIZE
constexpr unsigned kClockLimitTdp = 0xffffff01;  // NVML_CLOCK_LIMIT_ID_TDP: the rated base clock

template <typename Fn>
void resolve(void* library, Fn& fn, const char* name) {
  fn = reinterpret_cast<Fn>(dlsym(library, name));
}

// An NVML list: read into room for 16 entries (one call, for a GPU that few processes share); where
// NVML says there are more, into room for that many and a few that may appear in between.
// `read(count, buffer)` is the call; returns NVML's result, and the entries read into `out`.
template <typename T, typename Read>
int read_list(std::vector<T>& out, Read read) {
  out.resize(16);
  auto count = static_cast<unsigned>(out.size());
  int rc = read(&count, out.data());
  for (int attempt = 0; rc == kInsufficientSize && attempt < 4; ++attempt) {
    out.resize(count + 8);
    count = static_cast<unsigned>(out.size());
    rc = read(&count, out.data());
  }
  out.resize(rc == 0 ? std::min<std::size_t>(count, out.size()) : 0);
  return rc;
}

class NvmlLibrary {
 public:
  NvmlLibrary() {
    // Stays loaded for the life of the process: unloading it buys nothing.
    void* library = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (library == nullptr) {
      const char* why = dlerror();
      api.unavailable_reason = unloadable_nvml(why ? why : "unknown reason");
      return;
    }
    int (*init)() = nullptr;
    resolve(library, init, "nvmlInit_v2");
    resolve(library, shutdown_, "nvmlShutdown");
    resolve(library, api.error_string, "nvmlErrorString");
    if (init == nullptr) {
      api.unavailable_reason = "libnvidia-ml.so.1 has no nvmlInit_v2 (driver too old)";
      return;
    }
    if (const int rc = init(); rc != 0) {
      api.unavailable_reason = "nvmlInit_v2 failed: " + api.error(rc);
      return;
    }
    initialised_ = true;
    resolve(library, api.device_get_handle_by_uuid, "nvmlDeviceGetHandleByUUID");
    resolve(library, api.device_get_clock_info, "nvmlDeviceGetClockInfo");
    resolve(library, api.device_get_max_clock_info, "nvmlDeviceGetMaxClockInfo");
    resolve(library, api.device_get_current_clocks_event_reasons,
            "nvmlDeviceGetCurrentClocksEventReasons");
    if (api.device_get_current_clocks_event_reasons == nullptr) {  // the name before driver 535
      resolve(library, api.device_get_current_clocks_event_reasons,
              "nvmlDeviceGetCurrentClocksThrottleReasons");
    }
    resolve(library, api.device_get_margin_temperature, "nvmlDeviceGetMarginTemperature");
    resolve(library, api.device_set_gpu_locked_clocks, "nvmlDeviceSetGpuLockedClocks");
    resolve(library, api.device_reset_gpu_locked_clocks, "nvmlDeviceResetGpuLockedClocks");
    resolve(library, api.device_get_total_energy_consumption, "nvmlDeviceGetTotalEnergyConsumption");
    resolve(library, api.device_get_compute_running_processes, "nvmlDeviceGetComputeRunningProcesses_v3");
    resolve(library, api.device_get_process_utilization, "nvmlDeviceGetProcessUtilization");
    resolve(library, api.system_get_driver_version, "nvmlSystemGetDriverVersion");
    resolve(library, api.device_get_api_restriction, "nvmlDeviceGetAPIRestriction");
  }

  ~NvmlLibrary() {
    if (initialised_ && shutdown_ != nullptr) shutdown_();
  }

  NvmlApi api;

 private:
  int (*shutdown_)() = nullptr;
  bool initialised_ = false;
};

}  // namespace

const NvmlApi& nvml() {
  static NvmlLibrary library;
  return library.api;
}

std::string unloadable_nvml(const std::string& why) {
  return "libnvidia-ml.so.1 could not be loaded (" + why + "). It comes with the NVIDIA driver: install the "
         "driver (nvidia-smi needs the same library); in a container, give it the driver's utility libraries "
         "(NVIDIA Container Toolkit: docker run --gpus all -e NVIDIA_DRIVER_CAPABILITIES=compute,utility); or "
         "add the directory that holds libnvidia-ml.so.1 to LD_LIBRARY_PATH";
}

std::string driver_version(const NvmlApi& api) {
  char text[96] = {};  // NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE is 80
  if (api.system_get_driver_version == nullptr || api.system_get_driver_version(text, sizeof text) != 0) return {};
  return text;
}

NvmlDeviceControl::NvmlDeviceControl(NvmlApi api, const std::string& uuid) : api_(std::move(api)) {
  if (!api_.unavailable_reason.empty()) {
    reason_ = api_.unavailable_reason;
    return;
  }
  if (api_.device_get_handle_by_uuid == nullptr) {
    reason_ = "libnvidia-ml.so.1 lacks nvmlDeviceGetHandleByUUID (driver too old)";
    return;
  }
  if (const int rc = api_.device_get_handle_by_uuid(uuid.c_str(), &device_); rc != 0) {
    device_ = nullptr;
    reason_ = "nvmlDeviceGetHandleByUUID(" + uuid + ") failed: " + api_.error(rc);
    return;
  }
  rated_ = read(api_.device_get_max_clock_info);
}

ClockReading NvmlDeviceControl::clocks() {
  ClockReading reading = read(api_.device_get_clock_info);
  unsigned long long reasons = 0;
  if (device_ != nullptr && api_.device_get_current_clocks_event_reasons != nullptr &&
      api_.device_get_current_clocks_event_reasons(device_, &reasons) == 0) {
    reading.event_reasons = reasons;
  }
  return reading;
}

std::optional<double> NvmlDeviceControl::thermal_margin_c() {
  if (device_ == nullptr || api_.device_get_margin_temperature == nullptr) return std::nullopt;
  const auto now = std::chrono::steady_clock::now();
  if (margin_read_at_ && now - *margin_read_at_ < kMarginReuse) return margin_c_;
  NvmlApi::MarginTemperature margin{NvmlApi::kMarginTemperatureV1, 0};
  margin_read_at_ = now;
  margin_c_ = api_.device_get_margin_temperature(device_, &margin) == 0 ? std::optional<double>(margin.margin_c)
                                                                       : std::nullopt;
  return margin_c_;
}

ClockReading NvmlDeviceControl::lock_base_clocks() {
  if (device_ == nullptr) {
    throw BackendError("clock_control base needs NVML to lock the GPU clocks, and NVML is "
                       "unavailable: " + reason_ + ". Use clock_control none");
  }
  if (api_.device_set_gpu_locked_clocks == nullptr || api_.device_reset_gpu_locked_clocks == nullptr) {
    throw BackendError("clock_control base: this driver's NVML has no nvmlDeviceSetGpuLockedClocks "
                       "(driver too old); use clock_control none");
  }
  const int rc = api_.device_set_gpu_locked_clocks(device_, kClockLimitTdp, kClockLimitTdp);
  if (rc == kNoPermission) {
    throw BackendError("clock_control base: locking GPU clocks needs root/admin rights (" +
                       api_.error(rc) + "). Run as root, or use clock_control none");
  }
  if (rc == kNotSupported) {
    throw BackendError("clock_control base: this GPU cannot lock its clocks (" + api_.error(rc) +
                       "; Volta or newer is needed). Use clock_control none");
  }
  if (rc != 0) {
    throw BackendError("clock_control base: nvmlDeviceSetGpuLockedClocks failed: " + api_.error(rc) +
                       ". Use clock_control none");
  }
  return clocks();
}

void NvmlDeviceControl::restore_clocks() noexcept {
  if (device_ != nullptr && api_.device_reset_gpu_locked_clocks != nullptr) {
    api_.device_reset_gpu_locked_clocks(device_);
  }
}

std::vector<unsigned> NvmlDeviceControl::other_processes() {
  if (device_ == nullptr || others_unsupported_ || api_.device_get_compute_running_processes == nullptr)
    return {};
  const auto now = std::chrono::steady_clock::now();
  if (others_read_at_ && now - *others_read_at_ < kOthersReuse) return others_;
  others_read_at_ = now;
  std::vector<NvmlApi::ProcessInfo> running;
  const int rc = read_list(running, [&](unsigned* count, NvmlApi::ProcessInfo* infos) {
    return api_.device_get_compute_running_processes(device_, count, infos);
  });
  if (rc == kNotSupported) others_unsupported_ = true;
  // This process holds a context on the GPU, so it is the one listed when one is (under its pid, or
  // another PID namespace's). None listed: NVML hides them here, and the samples may still tell.
  if (rc != 0 || running.size() == 1) return others_ = {};
  if (auto busy = busy_since_last()) others_ = std::move(*busy);
  return others_;
}

std::optional<std::vector<unsigned>> NvmlDeviceControl::busy_since_last() {
  if (api_.device_get_process_utilization == nullptr) return std::nullopt;
  std::vector<NvmlApi::ProcessUtilizationSample> samples;
  const int rc = read_list(samples, [&](unsigned* count, NvmlApi::ProcessUtilizationSample* out) {
    return api_.device_get_process_utilization(device_, out, count, last_sample_us_);
  });
  if (rc == kNotSupported) others_unsupported_ = true;
  if (rc != 0) return rc == kNotFound ? std::nullopt : std::optional<std::vector<unsigned>>(std::vector<unsigned>{});
  const auto self = static_cast<unsigned>(getpid());
  std::vector<unsigned> busy;
  bool self_busy = false;
  for (const NvmlApi::ProcessUtilizationSample& s : samples) {
    last_sample_us_ = std::max(last_sample_us_, s.time_stamp_us);
    if (s.sm_util == 0) continue;
    if (s.pid == self) self_busy = true;
    else if (std::find(busy.begin(), busy.end(), s.pid) == busy.end()) busy.push_back(s.pid);
  }
  // This process measures, so it was busy: not found under its pid, it is one of the busy ones under
  // another PID namespace's (a container's), and only a second one is another process.
  if (!self_busy && busy.size() < 2) busy.clear();
  return busy;
}

ClockReading NvmlDeviceControl::read(int (*clock_info)(NvmlApi::Device, int, unsigned*)) const {
  ClockReading reading;
  if (device_ == nullptr || clock_info == nullptr) return reading;
  unsigned mhz = 0;
  if (clock_info(device_, NvmlApi::kClockSm, &mhz) == 0) reading.sm_mhz = mhz;
  if (clock_info(device_, NvmlApi::kClockMemory, &mhz) == 0) reading.memory_mhz = mhz;
  return reading;
}

double NvmlEnergyCounter::now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

EnergyReading NvmlEnergyCounter::read() {
  const std::string fix = ". Measure without the nvml__ energy metrics";
  if (device_ == nullptr)
    throw BackendError("the energy metrics read the GPU's energy counter through NVML, which is unavailable: " +
                       reason_ + fix);
  if (api_.device_get_total_energy_consumption == nullptr)
    throw BackendError("the energy metrics need nvmlDeviceGetTotalEnergyConsumption, which this driver's NVML lacks "
                       "(driver too old)" + fix);
  unsigned long long millijoules = 0;
  const double before = now_s();
  const int rc = api_.device_get_total_energy_consumption(device_, &millijoules);
  const double after = now_s();
  if (rc == kNotSupported)
    throw BackendError("this GPU has no total-energy counter (nvmlDeviceGetTotalEnergyConsumption: " + api_.error(rc) +
                       "; NVIDIA's data-center GPUs have one from Volta on)" + fix);
  if (rc != 0) throw BackendError("nvmlDeviceGetTotalEnergyConsumption failed: " + api_.error(rc) + fix);
  return {millijoules, 0.5 * (before + after)};
}

std::string NvmlApi::error(int result) const {
  const char* text = error_string ? error_string(result) : nullptr;
  return std::string(text ? text : "unknown error") + ", NVML error " + std::to_string(result);
}

}  // namespace kscope::device

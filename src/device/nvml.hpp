#pragma once
// GPU telemetry and clock control from NVML, loaded at run time: libnvidia-ml.so.1 ships with the
// driver, not the toolkit, so there is no nvml.h to compile against. A missing library, symbol or
// device makes telemetry unavailable (NaN / nullopt readings plus a reason), never an error.
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kscope/measurement_backend.hpp"

namespace kscope::device {

// The NVML entry points kscope uses, with their C ABI (nvmlReturn_t and the enums are ints,
// 0 = NVML_SUCCESS). A null pointer means the symbol is missing. CPU tests fill one with fakes.
struct NvmlApi {
  using Device = struct nvmlDevice_st*;
  struct MarginTemperature {  // nvmlMarginTemperature_v1_t
    unsigned version;
    int margin_c;
  };
  static constexpr unsigned kMarginTemperatureV1 = sizeof(MarginTemperature) | (1u << 24);
  static constexpr int kClockSm = 1;      // NVML_CLOCK_SM
  static constexpr int kClockMemory = 2;  // NVML_CLOCK_MEM
  struct ProcessInfo {  // nvmlProcessInfo_t (v2 on): what nvmlDeviceGetComputeRunningProcesses_v3 fills
    unsigned pid;
    unsigned long long used_gpu_memory;
    unsigned gpu_instance_id, compute_instance_id;
  };
  struct ProcessUtilizationSample {  // nvmlProcessUtilizationSample_t
    unsigned pid;
    unsigned long long time_stamp_us;  // CPU timestamp of the sample
    unsigned sm_util, mem_util, enc_util, dec_util;  // percent of the sample period
  };

  int (*device_get_handle_by_uuid)(const char* uuid, Device* device) = nullptr;
  int (*device_get_clock_info)(Device device, int clock_type, unsigned* mhz) = nullptr;
  int (*device_get_max_clock_info)(Device device, int clock_type, unsigned* mhz) = nullptr;
  int (*device_get_current_clocks_event_reasons)(Device device, unsigned long long* reasons) =
      nullptr;
  int (*device_get_margin_temperature)(Device device, MarginTemperature* margin) = nullptr;
  int (*device_set_gpu_locked_clocks)(Device device, unsigned min_mhz, unsigned max_mhz) = nullptr;
  int (*device_reset_gpu_locked_clocks)(Device device) = nullptr;
  int (*device_get_total_energy_consumption)(Device device, unsigned long long* millijoules) = nullptr;
  int (*device_get_compute_running_processes)(Device device, unsigned* count, ProcessInfo* infos) = nullptr;
  int (*device_get_process_utilization)(Device device, ProcessUtilizationSample* samples, unsigned* count,
                                        unsigned long long last_seen_us) = nullptr;
  // Read-only facts for `kscope doctor`.
  int (*system_get_driver_version)(char* text, unsigned length) = nullptr;
  int (*device_get_api_restriction)(Device device, int api, int* state) = nullptr;
  const char* (*error_string)(int result) = nullptr;
  std::string unavailable_reason;  // empty once the library is loaded and initialised

  // "<nvmlErrorString>, NVML error <rc>".
  std::string error(int result) const;
};

// The process-wide library: dlopen and nvmlInit_v2 on first use, nvmlShutdown at exit.
const NvmlApi& nvml();

// Why NVML is unavailable where dlopen could not load its library (`why`, dlerror's words), with
// what to do about it.
std::string unloadable_nvml(const std::string& why);

// The NVIDIA driver's version ("580.65.06"); empty when NVML cannot tell.
std::string driver_version(const NvmlApi& api);

// nvmlDeviceGetTotalEnergyConsumption (mJ since the driver loaded; Volta and newer), timed on the
// steady clock at the middle of the call: on an H200 one call takes ~3 ms (up to 18 ms seen) and
// the value changes every ~100 ms.
class NvmlEnergyCounter final : public EnergyCounter {
 public:
  // The device and reason of the NvmlDeviceControl it belongs to: a null device means NVML cannot
  // reach the GPU, for that reason.
  NvmlEnergyCounter(const NvmlApi& api, const NvmlApi::Device& device, const std::string& unavailable_reason)
      : api_(api), device_(device), reason_(unavailable_reason) {}
  EnergyReading read() override;
  double now_s() override;

 private:
  const NvmlApi& api_;
  const NvmlApi::Device& device_;
  const std::string& reason_;
};

// The NVML device with this UUID ("GPU-..."). Found by UUID, never by index: NVML enumerates every
// GPU and ignores CUDA_VISIBLE_DEVICES, and its order is not CUDA's.
class NvmlDeviceControl final : public DeviceControl {
 public:
  NvmlDeviceControl(NvmlApi api, const std::string& uuid);
  NvmlDeviceControl(const NvmlDeviceControl&) = delete;  // its energy counter refers to its members
  NvmlDeviceControl& operator=(const NvmlDeviceControl&) = delete;

  // SM and memory clocks and the clock-event reasons, right now.
  ClockReading clocks() override;
  // nvmlDeviceGetMarginTemperature costs ~570 us on an H200 (the clocks ~0.7 us): the thermal
  // guard, its only caller, limits how often it reads, and a reading is reused for
  // kMarginReuse, so that back-to-back profile() calls (each a new guard) do not pay it each.
  std::optional<double> thermal_margin_c() override;
  static constexpr std::chrono::milliseconds kMarginReuse{100};
  // Locks the SM clock to the rated TDP ("base") clock, as ncu --clock-control base does. Memory
  // clocks are left alone (NVML has no base value for them). Needs root: the lock is device-wide.
  ClockReading lock_base_clocks() override;
  void restore_clocks() noexcept override;
  EnergyCounter* energy_counter() override { return &energy_; }
  // NVML's running compute processes of the GPU; where another process than this one holds a
  // context there, their SM utilization since the last reading (NVML returns a sample for each
  // process busy in its sampling period): the busy ones. Read at most every kOthersReuse; between
  // readings, and while NVML has no newer sample, the last answer stands. Where this process is not
  // among the busy pids (NVML's pids are another PID namespace's, in a container), one of them is
  // it, so two are needed.
  std::vector<unsigned> other_processes() override;
  static constexpr std::chrono::milliseconds kOthersReuse{20};

  // The maximum SM and memory clocks; NaN fields when unknown.
  ClockReading rated_clocks() const { return rated_; }
  // Empty when telemetry works, otherwise why it does not (for debug output).
  const std::string& unavailable_reason() const { return reason_; }

 private:
  ClockReading read(int (*clock_info)(NvmlApi::Device, int, unsigned*)) const;
  // The busy processes but this one in NVML's samples since the last reading; nullopt when NVML has
  // none newer (or cannot say).
  std::optional<std::vector<unsigned>> busy_since_last();

  NvmlApi api_;
  NvmlApi::Device device_ = nullptr;
  ClockReading rated_;
  std::string reason_;
  std::optional<std::chrono::steady_clock::time_point> margin_read_at_;
  std::optional<double> margin_c_;
  // other_processes(): when last read, NVML's newest sample then, and the answer.
  std::optional<std::chrono::steady_clock::time_point> others_read_at_;
  unsigned long long last_sample_us_ = 0;
  std::vector<unsigned> others_;
  bool others_unsupported_ = false;
  NvmlEnergyCounter energy_{api_, device_, reason_};
};

}  // namespace kscope::device

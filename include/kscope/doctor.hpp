#pragma once
// kscope doctor: what will and will not work on this machine, and why, in seconds and without
// changing anything: no clock or mode is set (clock-lock permission is read, never tried), and
// CUPTI is subscribed only for an instant to see whether another profiler owns it. NVML is only
// read (clocks, restrictions, the energy counter).
//
// Side effects worth knowing in a long-lived process (Python): after recording whether CUDA was
// already initialised, the doctor initialises it (cuInit) to list the devices, and the counter
// probe creates device 0's primary context and initialises CUPTI's profiler, as Backend::counters
// would.
//
// Exit codes (DoctorReport::exit_code, and `kscope doctor`):
//   0  every backend works here
//   1  some backends are unavailable (each says why)
//   2  nothing can measure: no NVIDIA driver, no GPU, or a driver too old for kscope's CUDA runtime
#include <cmath>
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "kscope/backend.hpp"

namespace kscope {

// --- Facts, as the probes found them ------------------------------------------------------------

enum class CudaInitState {
  driver_not_loaded,  // libcuda.so.1 was not loaded in this process, so CUDA was not initialised
  not_initialized,    // libcuda loaded, but cuInit not yet called
  initialized,        // cuInit had been called before the doctor ran
};
std::string to_string(CudaInitState state);

// The host the doctor ran on, and as whom.
struct HostFacts {
  std::string name;  // the host name
  unsigned euid = 0;  // the effective user id
};

// How far CUDA had been started in this process before the doctor looked.
struct CudaStateFacts {
  CudaInitState state = CudaInitState::driver_not_loaded;  // how far CUDA had been started
  bool context_current = false;  // a CUDA context was current on the calling thread
};

// One GPU as the driver, CUDA and NVML describe it.
struct DoctorDevice {
  int ordinal = 0;  // CUDA's device ordinal
  std::string name;  // the device's name
  std::string uuid;  // "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx"
  int cc_major = 0;  // compute capability, major
  int cc_minor = 0;  // compute capability, minor
  int sm_count = 0;  // streaming multiprocessors
  std::size_t l2_bytes = 0;  // L2 cache size
  std::size_t memory_bytes = 0;  // device memory size
  int memory_bus_width_bits = 0;  // the DRAM interface's width
  double rated_sm_clock_mhz = NAN;      // NVML's maximum clock, else CUDA's attribute
  double rated_memory_clock_mhz = NAN;  // NVML's maximum, else CUDA's attribute
  bool primary_context_active = false;  // before the doctor ran (known when CUDA was initialised)
  std::string nvml_problem;             // empty when NVML found the device by UUID
  // nvmlDeviceGetAPIRestriction(SET_APPLICATION_CLOCKS): true = only root may change clocks.
  std::optional<bool> clocks_restricted_to_root;
  // nvmlDeviceGetTotalEnergyConsumption, read once as the energy metrics read it: nullopt when NVML
  // did not reach the device (nvml_problem says why); false with the error they would raise.
  std::optional<bool> energy_counter_readable;
  std::string energy_counter_problem;  // why the energy counter cannot be read; empty otherwise
};

// The NVIDIA driver (libcuda) and the GPUs it sees.
struct DriverFacts {
  std::string problem;      // libcuda.so.1 missing, or cuInit failed; empty otherwise
  bool no_device = false;   // the driver works but sees no GPU (CUDA_ERROR_NO_DEVICE)
  int cuda_version = 0;     // cuDriverGetVersion: 13000 = CUDA 13.0; 0 unknown
  std::vector<DoctorDevice> devices;  // one per GPU the driver sees
};

// NVML, which the clocks, throttle reasons, thermal guard and energy metrics read.
struct NvmlFacts {
  std::string problem;         // libnvidia-ml.so.1 missing or nvmlInit failed; empty otherwise
  std::string driver_version;  // "580.159.04"
};

// CUPTI, which the cupti and counters backends use, and who holds it.
struct CuptiFacts {
  std::string problem;  // libcupti could not be loaded or queried; empty otherwise
  std::string path;  // the CUPTI library loaded
  unsigned version = 0;  // cuptiGetVersion (CUPTI_API_VERSION, e.g. 130001)
  std::string owner;     // the tool holding CUPTI's single subscriber slot ("Nsight Compute"); empty: free
  std::string subscribe_problem;  // cuptiSubscribe_v2 failed for another reason; empty otherwise
};

// Whether this process may read hardware counters.
struct CounterFacts {
  std::optional<bool> admin_only;  // RmProfilingAdminOnly in /proc/driver/nvidia/params
  bool root = false;               // effective uid 0
  bool probed = false;             // a one-metric range-profiler session was enabled on device 0
  std::string problem;             // probed: why it failed (empty = counters readable); else why not probed
};

// Whether this process may sample program counters (the pcsampling backend, kscope.analyze.lines).
struct PcSamplingFacts {
  bool probed = false;  // PC sampling was enabled and disabled on device 0's primary context
  std::string problem;  // probed: why it failed (empty = permitted); else why not probed
};

// The Nsight Compute CLI that Backend::ncu drives.
struct NcuFacts {
  std::string path;  // the ncu program found
  std::string version;        // "2025.3.1.0"; empty when unknown
  std::string problem;        // missing, too old or broken; empty when kscope can drive it
  std::string rerun_problem;  // this process cannot be re-run under ncu (interactive Python); empty otherwise
};

// Everything the doctor found, before any verdict.
struct DoctorFacts {
  HostFacts host;  // the host
  CudaStateFacts cuda_state;  // CUDA's state in this process
  int runtime_cuda_version = 0;  // cudaRuntimeGetVersion of the runtime kscope uses
  DriverFacts driver;  // the driver and its GPUs
  NvmlFacts nvml;  // NVML
  CuptiFacts cupti;  // CUPTI
  CounterFacts counters;  // counter permission
  PcSamplingFacts pc_sampling;  // PC sampling permission
  NcuFacts ncu;  // the Nsight Compute CLI
};

// --- Verdicts -----------------------------------------------------------------------------------

enum class CheckStatus { ok, warning, error, skipped };
std::string to_string(CheckStatus status);  // "ok", "warning", "error", "skipped"

// One verdict of the report: a line of `kscope doctor`, with its details and fix.
struct DoctorCheck {
  std::string id;                    // "driver", "devices", "roofs", "cuda_init", "nvml", "clock_lock",
                                     // "energy", "cupti", "cupti_owner", "counters", "pc_sampling", "ncu"
  CheckStatus status = CheckStatus::ok;
  std::string summary;               // one line
  std::vector<std::string> details;  // more lines (one per device, ...)
  std::string fix;                   // what to do; empty when ok
};

// Whether a backend can measure on this machine, and why not.
struct BackendAvailability {
  Backend backend = Backend::cupti;  // the backend judged
  bool available = false;  // whether it can measure here
  std::string reason;  // why not, or a note (e.g. which backend automatic picks)
};

// What the doctor returns: the facts, the checks, and each backend's availability.
struct DoctorReport {
  DoctorFacts facts;  // what the doctor found
  std::vector<DoctorCheck> checks;  // one per line of the report
  std::vector<BackendAvailability> backends;  // those of the backend registry with a verdict, in its order

  int exit_code() const;  // 0, 1 or 2, as documented at the top of this file
};

// Probes this machine and this process.
DoctorReport run_doctor();

// The verdicts that follow from `facts` (what run_doctor applies to what it found).
DoctorReport assess(DoctorFacts facts);

std::string to_text(const DoctorReport& report);  // a readable report
std::string to_json(const DoctorReport& report);  // {"exit_code", "verdict", "checks", "backends", "facts"}

}  // namespace kscope

#pragma once
// The CUDA device a backend measures on: its facts (name, UUID, SMs, L2), and the device-side
// services every backend shares: NVML telemetry and clock control, the L2 flusher, and the
// SessionInfo that describes it.
#include <cstddef>
#include <optional>
#include <string>

#include "device/l2_flush.hpp"
#include "device/nvml.hpp"
#include "kscope/results.hpp"
#include "kscope/settings.hpp"

namespace kscope::device {

struct CudaDeviceFacts {
  int ordinal = 0;
  std::string name;
  std::string uuid;                      // "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx"
  int sm_count = 0;
  int compute_capability = 0;            // major * 10 + minor
  std::size_t l2_bytes = 0;
  int memory_bus_width_bits = 0;
  double peak_memory_clock_mhz = 0;      // cudaDevAttrMemoryClockRate
  double peak_sm_clock_mhz = 0;          // cudaDevAttrClockRate (the maximum boost clock)
};

// ordinal -1 resolves to the calling thread's current device (cudaGetDevice).
CudaDeviceFacts query_cuda_device(int ordinal);

// The 16 UUID bytes in nvidia-smi's form, which NVML's nvmlDeviceGetHandleByUUID accepts.
std::string format_gpu_uuid(const unsigned char (&bytes)[16]);

std::string host_name();

// The facts, NVML telemetry and L2 flusher of a device are the process's: looked up on the first
// MeasuredDevice of that device and kept, so that a profile() call does not pay for
// cudaGetDeviceProperties, the NVML handle or the flush buffer's cudaMalloc and cudaFree again.
class MeasuredDevice {
 public:
  // Makes the device current on the calling thread and opens its NVML telemetry.
  explicit MeasuredDevice(int ordinal);

  const CudaDeviceFacts& facts() const { return facts_; }
  // Makes the device current on the calling thread, makes the device's L2 flusher when the
  // session flushes (so no allocation happens between runs), and says at Verbosity::debug why
  // NVML telemetry is unavailable, if it is.
  void begin_session(const Settings& settings);
  // How the flush is launched: one graph launch (the fewest host calls), or its memset and discard
  // kernel one by one, as the counters backend needs: CUPTI does not support graph launches in an
  // AutoRange pass with user replay (on the H200: cuptiRangeProfilerStop CUPTI_ERROR_UNKNOWN, NaN
  // values, crashes).
  enum class FlushLaunch { graph, kernels };
  // Evicts the L2 on `stream`: a graph launch makes persisting lines normal first, the kernels one
  // by one do not (L2Flusher::enqueue says why).
  void flush_l2(cudaStream_t stream, FlushLaunch launch = FlushLaunch::graph);
  // Waits for everything launched on the device.
  void synchronize();
  DeviceControl& control() { return control_; }
  // Backend, device (with what its roofs come from), host and rated clocks; the session fills
  // cache and clock control.
  SessionInfo describe(Backend backend) const;

 private:
  const CudaDeviceFacts& facts_;
  NvmlDeviceControl& control_;
  L2Flusher* flusher_ = nullptr;
};

}  // namespace kscope::device

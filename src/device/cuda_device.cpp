#include "device/cuda_device.hpp"

#include <unistd.h>

#include <climits>
#include <cmath>
#include <cstdio>
#include <map>
#include <mutex>

#include "core/model/log.hpp"
#include "device/cuda_check.hpp"

namespace kscope::device {

std::string format_gpu_uuid(const unsigned char (&b)[16]) {
  char text[64];
  std::snprintf(text, sizeof text,
                "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0],
                b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13],
                b[14], b[15]);
  return text;
}

CudaDeviceFacts query_cuda_device(int ordinal) {
  if (ordinal < 0) check_cuda(cudaGetDevice(&ordinal), "cudaGetDevice");
  cudaDeviceProp prop{};
  check_cuda(cudaGetDeviceProperties(&prop, ordinal), "cudaGetDeviceProperties");
  auto attribute = [ordinal](cudaDeviceAttr attr, const char* call) {
    int value = 0;
    check_cuda(cudaDeviceGetAttribute(&value, attr, ordinal), call);
    return value;
  };
  CudaDeviceFacts facts;
  facts.ordinal = ordinal;
  facts.name = prop.name;
  unsigned char uuid[16];
  for (int i = 0; i < 16; ++i) uuid[i] = static_cast<unsigned char>(prop.uuid.bytes[i]);
  facts.uuid = format_gpu_uuid(uuid);
  facts.sm_count = prop.multiProcessorCount;
  facts.compute_capability = prop.major * 10 + prop.minor;
  facts.l2_bytes = static_cast<std::size_t>(prop.l2CacheSize);
  facts.memory_bus_width_bits = prop.memoryBusWidth;
  facts.peak_memory_clock_mhz =
      attribute(cudaDevAttrMemoryClockRate, "cudaDeviceGetAttribute(cudaDevAttrMemoryClockRate)") /
      1000.0;
  facts.peak_sm_clock_mhz =
      attribute(cudaDevAttrClockRate, "cudaDeviceGetAttribute(cudaDevAttrClockRate)") / 1000.0;
  return facts;
}

std::string host_name() {
  char name[HOST_NAME_MAX + 1] = {};
  if (gethostname(name, sizeof name - 1) != 0) return "unknown";
  return name;
}

namespace {

// What a device is and its NVML telemetry, looked up once per process (never destroyed: NVML and
// the CUDA runtime may be gone before static destructors run).
struct KnownDevice {
  CudaDeviceFacts facts;
  NvmlDeviceControl control;
};

KnownDevice& known_device(int ordinal) {
  static std::mutex mutex;
  static auto* devices = new std::map<int, KnownDevice*>;
  if (ordinal < 0) check_cuda(cudaGetDevice(&ordinal), "cudaGetDevice");
  std::lock_guard lock(mutex);
  KnownDevice*& device = (*devices)[ordinal];
  if (!device) {
    CudaDeviceFacts facts = query_cuda_device(ordinal);
    const std::string uuid = facts.uuid;
    device = new KnownDevice{std::move(facts), NvmlDeviceControl(nvml(), uuid)};
  }
  return *device;
}

}  // namespace

MeasuredDevice::MeasuredDevice(int ordinal)
    : facts_(known_device(ordinal).facts), control_(known_device(facts_.ordinal).control) {
  check_cuda(cudaSetDevice(facts_.ordinal), "cudaSetDevice");
}

void MeasuredDevice::begin_session(const Settings& settings) {
  check_cuda(cudaSetDevice(facts_.ordinal), "cudaSetDevice");
  if (settings.cache_control == CacheControl::all && !flusher_) flusher_ = &L2Flusher::of(facts_.ordinal);
  if (!control_.unavailable_reason().empty())
    detail::log_debug("NVML telemetry unavailable on " + facts_.uuid + ": " + control_.unavailable_reason());
}

void MeasuredDevice::flush_l2(cudaStream_t stream, FlushLaunch launch) {
  if (!flusher_) flusher_ = &L2Flusher::of(facts_.ordinal);  // flush_cache without cache_control=all
  if (launch == FlushLaunch::graph) flusher_->flush(stream);
  else flusher_->enqueue(stream);
}

void MeasuredDevice::synchronize() { check_cuda(cudaDeviceSynchronize(), "cudaDeviceSynchronize"); }

SessionInfo MeasuredDevice::describe(Backend backend) const {
  SessionInfo info;
  info.backend = backend;
  info.gpu = facts_.name;
  info.gpu_uuid = facts_.uuid;
  // Neither changes while the process runs.
  static const std::string driver = driver_version(nvml());
  static const std::string host = host_name();
  info.driver_version = driver;
  info.host = host;
  // Without NVML, CUDA's peak clocks are the same quantity (the H200 reports 1980 MHz in both).
  const ClockReading rated = control_.rated_clocks();
  info.rated_sm_clock_mhz = std::isnan(rated.sm_mhz) ? facts_.peak_sm_clock_mhz : rated.sm_mhz;
  info.rated_memory_clock_mhz =
      std::isnan(rated.memory_mhz) ? facts_.peak_memory_clock_mhz : rated.memory_mhz;
  info.sm_count = static_cast<std::size_t>(facts_.sm_count);
  info.compute_capability = static_cast<std::size_t>(facts_.compute_capability);
  info.memory_bus_width_bits = static_cast<std::size_t>(facts_.memory_bus_width_bits);
  return info;
}

}  // namespace kscope::device

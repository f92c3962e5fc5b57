// The CUDA driver, reached through dlopen so that the doctor also runs where no driver is
// installed. libcuda stays loaded once opened: CUDA does not support being unloaded.
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <dlfcn.h>

#include "device/cuda_device.hpp"
#include "doctor/shared_library.hpp"
#include "doctor/system_probes.hpp"

namespace kscope::doctor {
namespace {

constexpr const char* kDriverLibrary = "libcuda.so.1";

struct DriverApi {
  decltype(&cuDriverGetVersion) driver_get_version = nullptr;
  decltype(&cuInit) init = nullptr;
  decltype(&cuGetErrorName) error_name = nullptr;
  decltype(&cuDeviceGetCount) device_get_count = nullptr;
  decltype(&cuDeviceGet) device_get = nullptr;
  decltype(&cuDeviceGetName) device_get_name = nullptr;
  decltype(&cuDeviceGetAttribute) device_get_attribute = nullptr;
  decltype(&cuDeviceGetUuid) device_get_uuid = nullptr;       // cuDeviceGetUuid_v2
  decltype(&cuDeviceTotalMem) device_total_mem = nullptr;     // cuDeviceTotalMem_v2
  decltype(&cuDevicePrimaryCtxGetState) primary_ctx_get_state = nullptr;
  std::string problem;  // empty when loaded with every symbol
};

template <typename Fn>
void resolve(void* library, Fn& fn, const char* name, std::string& problem) {
  fn = reinterpret_cast<Fn>(dlsym(library, name));
  if (fn == nullptr && problem.empty())
    problem = std::string(kDriverLibrary) + " lacks " + name + ": the NVIDIA driver is too old for kscope";
}

const DriverApi& driver_api() {
  static const DriverApi api = [] {
    DriverApi a;
    void* library = dlopen(kDriverLibrary, RTLD_NOW | RTLD_GLOBAL);  // kept for the life of the process
    if (library == nullptr) {
      const char* why = dlerror();
      a.problem = std::string(kDriverLibrary) + " could not be loaded (" + (why ? why : "unknown") +
                  "): no NVIDIA driver is installed or visible here";
      return a;
    }
    resolve(library, a.driver_get_version, "cuDriverGetVersion", a.problem);
    resolve(library, a.init, "cuInit", a.problem);
    resolve(library, a.error_name, "cuGetErrorName", a.problem);
    resolve(library, a.device_get_count, "cuDeviceGetCount", a.problem);
    resolve(library, a.device_get, "cuDeviceGet", a.problem);
    resolve(library, a.device_get_name, "cuDeviceGetName", a.problem);
    resolve(library, a.device_get_attribute, "cuDeviceGetAttribute", a.problem);
    resolve(library, a.device_get_uuid, "cuDeviceGetUuid_v2", a.problem);
    resolve(library, a.device_total_mem, "cuDeviceTotalMem_v2", a.problem);
    resolve(library, a.primary_ctx_get_state, "cuDevicePrimaryCtxGetState", a.problem);
    return a;
  }();
  return api;
}

std::string failed(const DriverApi& api, const char* call, CUresult rc) {
  const char* name = nullptr;
  if (api.error_name(rc, &name) != CUDA_SUCCESS || name == nullptr) name = "unknown CUDA error";
  return std::string(call) + " failed: " + name + " (" + std::to_string(static_cast<int>(rc)) + ")";
}

DoctorDevice describe_device(const DriverApi& api, int ordinal, std::string& problem) {
  DoctorDevice d;
  d.ordinal = ordinal;
  CUdevice device = 0;
  if (CUresult rc = api.device_get(&device, ordinal); rc != CUDA_SUCCESS) {
    problem = failed(api, "cuDeviceGet", rc);
    return d;
  }
  char name[256] = {};
  api.device_get_name(name, sizeof name - 1, device);
  d.name = name;
  CUuuid uuid{};
  unsigned char bytes[16] = {};
  if (api.device_get_uuid(&uuid, device) == CUDA_SUCCESS) {
    for (int i = 0; i < 16; ++i) bytes[i] = static_cast<unsigned char>(uuid.bytes[i]);
    d.uuid = device::format_gpu_uuid(bytes);
  }
  const auto attribute = [&](CUdevice_attribute which) {
    int value = 0;
    return api.device_get_attribute(&value, which, device) == CUDA_SUCCESS ? value : 0;
  };
  d.cc_major = attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
  d.cc_minor = attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
  d.sm_count = attribute(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
  d.l2_bytes = static_cast<std::size_t>(attribute(CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE));
  d.memory_bus_width_bits = attribute(CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH);
  // CUDA's peak clocks in kHz; NVML's maximum clocks replace them where available.
  if (const int khz = attribute(CU_DEVICE_ATTRIBUTE_CLOCK_RATE)) d.rated_sm_clock_mhz = khz / 1000.0;
  if (const int khz = attribute(CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE)) d.rated_memory_clock_mhz = khz / 1000.0;
  std::size_t bytes_total = 0;
  if (api.device_total_mem(&bytes_total, device) == CUDA_SUCCESS) d.memory_bytes = bytes_total;
  unsigned flags = 0;
  int active = 0;
  if (api.primary_ctx_get_state(device, &flags, &active) == CUDA_SUCCESS) d.primary_context_active = active != 0;
  return d;
}

}  // namespace

CudaStateFacts SystemProbes::cuda_state() {
  // RTLD_NOLOAD: only look whether the process already has libcuda, without loading it.
  const SharedLibrary loaded(kDriverLibrary, RTLD_NOW | RTLD_NOLOAD);
  if (!loaded) return {CudaInitState::driver_not_loaded, false};
  // Before cuInit every driver call returns CUDA_ERROR_NOT_INITIALIZED; this one changes nothing.
  const auto get_current = loaded.symbol<decltype(&cuCtxGetCurrent)>("cuCtxGetCurrent");
  CUcontext context = nullptr;
  if (get_current == nullptr || get_current(&context) == CUDA_ERROR_NOT_INITIALIZED)
    return {CudaInitState::not_initialized, false};
  return {CudaInitState::initialized, context != nullptr};
}

int SystemProbes::runtime_cuda_version() {
  int version = 0;
  // Reads a constant of the runtime library; it does not initialise CUDA.
  return cudaRuntimeGetVersion(&version) == cudaSuccess ? version : CUDART_VERSION;
}

DriverFacts SystemProbes::driver() {
  DriverFacts f;
  const DriverApi& api = driver_api();
  if (!api.problem.empty()) {
    f.problem = api.problem;
    return f;
  }
  api.driver_get_version(&f.cuda_version);
  if (const CUresult rc = api.init(0); rc == CUDA_ERROR_NO_DEVICE) {
    f.no_device = true;
    return f;
  } else if (rc != CUDA_SUCCESS) {
    f.problem = failed(api, "cuInit", rc);
    return f;
  }
  int count = 0;
  if (const CUresult rc = api.device_get_count(&count); rc != CUDA_SUCCESS) {
    f.problem = failed(api, "cuDeviceGetCount", rc);
    return f;
  }
  f.no_device = count == 0;
  for (int i = 0; i < count && f.problem.empty(); ++i) f.devices.push_back(describe_device(api, i, f.problem));
  return f;
}

}  // namespace kscope::doctor

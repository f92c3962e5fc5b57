#include "backends/counters/driver_api.hpp"

#include <cuda_runtime_api.h>

#include <string>

#include "device/cuda_check.hpp"
#include "kscope/errors.hpp"

namespace kscope::counters {
namespace {

template <typename Function>
Function* entry_point(const char* symbol) {
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult found{};
  device::check_cuda(cudaGetDriverEntryPointByVersion(symbol, &fn, 12000, cudaEnableDefault, &found),
                     "cudaGetDriverEntryPointByVersion");
  if (found != cudaDriverEntryPointSuccess || fn == nullptr)
    throw CudaError(std::string("the CUDA driver has no entry point ") + symbol + ": update the NVIDIA driver");
  return reinterpret_cast<Function*>(fn);
}

void check_driver(CUresult status, const char* call) {
  if (status != CUDA_SUCCESS)
    throw CudaError(std::string(call) + " failed with CUresult " + std::to_string(static_cast<int>(status)));
}

}  // namespace

CUcontext current_context() {
  device::check_cuda(cudaFree(nullptr), "cudaFree(0) (creating the primary context)");
  static auto* get = entry_point<CUresult(CUcontext*)>("cuCtxGetCurrent");
  CUcontext context = nullptr;
  check_driver(get(&context), "cuCtxGetCurrent");
  if (!context) throw InternalError("no CUDA context is current after cudaFree(0) (kscope bug: please report it)");
  return context;
}

CUdevice device_handle(int ordinal) {
  static auto* get = entry_point<CUresult(CUdevice*, int)>("cuDeviceGet");
  CUdevice device = 0;
  check_driver(get(&device, ordinal), "cuDeviceGet");
  return device;
}

bool event_completed(CUevent event) {
  static auto* query = entry_point<CUresult(CUevent)>("cuEventQuery");
  const CUresult status = query(event);
  if (status == CUDA_ERROR_NOT_READY) return false;
  check_driver(status, "cuEventQuery");
  return true;
}

}  // namespace kscope::counters

#include "device/cuda_check.hpp"

#include <cupti.h>

#include "core/model/backend_choice.hpp"
#include "core/model/caller_language.hpp"
#include "kscope/errors.hpp"

namespace kscope::device {
namespace {

// What the failures before any GPU work mean, first in the message: the runtime's own text for
// them ("CUDA driver version is insufficient for CUDA runtime version" when no driver is installed
// at all) misleads. Empty for other failures.
std::string no_usable_gpu(cudaError_t status) {
  switch (status) {
    case cudaErrorInsufficientDriver:
      return "no usable NVIDIA driver: none is installed (no libcuda.so.1), or it is older than this CUDA " +
             std::to_string(CUDART_VERSION / 1000) + "." + std::to_string(CUDART_VERSION % 1000 / 10) +
             " runtime needs";
    case cudaErrorNoDevice:
      return "no NVIDIA GPU is visible: none is installed, or CUDA_VISIBLE_DEVICES hides them";
    case cudaErrorStubLibrary:
      return "no usable NVIDIA driver: the libcuda.so found is the CUDA toolkit's stub, not a driver (check "
             "LD_LIBRARY_PATH)";
    case cudaErrorInitializationError:
    case cudaErrorSystemDriverMismatch:
    case cudaErrorCompatNotSupportedOnDevice:
      return "the NVIDIA driver cannot be used (its library and kernel module may differ in version, or the GPU "
             "is in a bad state)";
    default:
      return "";
  }
}

const char* cuda_hint(cudaError_t status) {
  switch (status) {
    case cudaErrorInvalidDevice:
      return "the device ordinal does not exist: check the device against CUDA_VISIBLE_DEVICES and nvidia-smi";
    case cudaErrorDevicesUnavailable:
      return "the device is busy or in exclusive/prohibited compute mode (nvidia-smi -q shows "
             "the compute mode); use another device or stop the process holding it";
    case cudaErrorMemoryAllocation:
      return "out of device memory: use a smaller problem or free memory held by other processes "
             "(nvidia-smi lists them)";
    case cudaErrorNoKernelImageForDevice:
    case cudaErrorUnsupportedPtxVersion:
      return "the code was not compiled for this GPU: add its architecture to "
             "CMAKE_CUDA_ARCHITECTURES (nvidia-smi --query-gpu=compute_cap shows it)";
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchFailure:
    case cudaErrorMisalignedAddress:
    case cudaErrorIllegalInstruction:
    case cudaErrorHardwareStackError:
      return "a kernel faulted, possibly an earlier one; the CUDA context is now unusable. "
             "Run the program under compute-sanitizer to find the faulting access";
    case cudaErrorLaunchTimeout:
      return "a kernel ran longer than the display watchdog allows: shorten it or use a GPU "
             "without a display";
    default:
      return nullptr;
  }
}

std::string cupti_hint(CUptiResult status) {
  const std::string events = detail::backend_choice(Backend::events);
  switch (status) {
    case CUPTI_ERROR_INSUFFICIENT_PRIVILEGES:
      return "GPU performance counters are restricted to administrators on this machine (driver "
             "setting NVreg_RestrictProfilingToAdminUsers=1; /proc/driver/nvidia/params shows "
             "RmProfilingAdminOnly: 1). Run as root, or have an admin set "
             "'options nvidia NVreg_RestrictProfilingToAdminUsers=0' in /etc/modprobe.d/ and "
             "reload the driver; in Docker add --cap-add=SYS_ADMIN. Timing with " +
             events + " still works. See https://developer.nvidia.com/ERR_NVGPUCTRPERM";
    case CUPTI_ERROR_VIRTUALIZED_DEVICE_INSUFFICIENT_PRIVILEGES:
      return "the hypervisor has not enabled profiling for this vGPU: ask the admin to set the "
             "vGPU plugin parameter enable_profiling; " +
             events + " still works";
    case CUPTI_ERROR_NOT_INITIALIZED:
      return "CUPTI cannot reach the NVIDIA driver, usually because the driver is older than this "
             "CUPTI (13.0) requires: compare nvidia-smi's 'CUDA Version' with the toolkit, or "
             "update the driver";
    case CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED:
    case CUPTI_ERROR_DISABLED:
      return "only one CUPTI client can run in a process. Use " + events +
             ", or run without the external tool (ncu, nsys, compute-sanitizer, cuda-gdb, torch.profiler, Proton)";
    case CUPTI_ERROR_HARDWARE_BUSY:
      return "the GPU's performance monitor is reserved by another client (e.g. DCGM profiling: "
             "'dcgmi profile --pause'), or another profiler process";
    case CUPTI_ERROR_VIRTUALIZED_DEVICE_NOT_SUPPORTED:
    case CUPTI_ERROR_NOT_SUPPORTED:
    case CUPTI_ERROR_CONFIDENTIAL_COMPUTING_NOT_SUPPORTED:
    case CUPTI_ERROR_CMP_DEVICE_NOT_SUPPORTED:
    case CUPTI_ERROR_MIG_DEVICE_NOT_SUPPORTED:
    case CUPTI_ERROR_SLI_DEVICE_NOT_SUPPORTED:
    case CUPTI_ERROR_WSL_DEVICE_NOT_SUPPORTED:
      return "CUPTI does not support this platform configuration; " + events + " still works";
    case CUPTI_ERROR_INVALID_CONTEXT:
      return "no CUDA context exists on the device yet: run one CUDA call (e.g. cudaFree(0)) "
             "before profiling";
    case CUPTI_ERROR_INVALID_OPERATION:
    case CUPTI_ERROR_OLD_PROFILER_API_INITIALIZED:
    case CUPTI_ERROR_LEGACY_PROFILER_NOT_SUPPORTED:
      return "CUPTI calls were made in an unsupported order: this is a kscope bug, please report "
             "it with this message";
    default:
      return {};
  }
}

}  // namespace

void check_cuda(cudaError_t status, const char* call) {
  if (status == cudaSuccess) return;
  if (const std::string problem = no_usable_gpu(status); !problem.empty())
    throw CudaError(problem + " (" + call + " failed: " + cudaGetErrorName(status) + "). " +
                    detail::spell("Run `kscope doctor`", "Run kscope.doctor()", "Run `kscope doctor`") +
                    " to see what is missing here, and nvidia-smi to check the driver");
  std::string message = std::string(call) + " failed: " + cudaGetErrorName(status) + " (" +
                        cudaGetErrorString(status) + ")";
  if (const char* hint = cuda_hint(status)) message += ". " + std::string(hint);
  throw CudaError(message);
}

void check_cupti(CUptiResult status, const char* call, const std::string& other_subscriber) {
  if (status == CUPTI_SUCCESS) return;
  const char* name = nullptr;
  if (cuptiGetResultString(status, &name) != CUPTI_SUCCESS || name == nullptr) name = "unknown";
  std::string message = std::string(call) + " failed: " + name + " (" +
                        std::to_string(static_cast<int>(status)) + ")";
  if (status == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED || status == CUPTI_ERROR_DISABLED) {
    message += ". Another profiler (" +
               (other_subscriber.empty() ? std::string("unknown tool") : other_subscriber) +
               ") owns CUPTI in this process, so the kscope cupti backend cannot run";
  }
  if (const std::string hint = cupti_hint(status); !hint.empty()) message += ". " + hint;
  throw BackendError(message);
}

}  // namespace kscope::device

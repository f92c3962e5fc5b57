#pragma once
// The few CUDA driver calls the counter backend needs (CUPTI takes a CUcontext and a CUdevice),
// reached through the runtime's cudaGetDriverEntryPointByVersion rather than linked: kscope's
// programs do not depend on libcuda.so.1, so they start, and say why they cannot measure, where no
// driver is installed.
#include <cuda.h>

namespace kscope::counters {

// The context current on the calling thread; creates the device's primary context first
// (cudaFree(0)). Throws CudaError.
CUcontext current_context();

// The driver's handle of CUDA device `ordinal`. Throws CudaError.
CUdevice device_handle(int ordinal);

// Whether the event's work has completed (cuEventQuery: unlike cudaEventQuery, a not-ready answer
// leaves the runtime's last error, which is the caller's, as it was). Throws CudaError.
bool event_completed(CUevent event);

}  // namespace kscope::counters

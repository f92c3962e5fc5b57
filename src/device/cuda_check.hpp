#pragma once
// Turns failed CUDA runtime and CUPTI calls into kscope errors that name the call, the error and,
// for the failures users actually meet, the fix.
#include <cuda_runtime_api.h>
#include <cupti_result.h>

#include <string>

namespace kscope::device {

// Throws CudaError unless status is cudaSuccess.
void check_cuda(cudaError_t status, const char* call);

// Throws BackendError unless status is CUPTI_SUCCESS. other_subscriber is the tool that owns
// CUPTI (reported by cuptiSubscribe_v2); it is named in the message when known.
void check_cupti(CUptiResult status, const char* call, const std::string& other_subscriber = {});

}  // namespace kscope::device

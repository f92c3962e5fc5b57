#include "device/stream_marker.hpp"

#include "device/cuda_check.hpp"

namespace kscope::device {
namespace {

__global__ void stream_marker() {}

}  // namespace

void launch_stream_marker(cudaStream_t stream) {
  // cudaLaunchKernel returns this launch's own error, never one the caller's code left pending.
  check_cuda(cudaLaunchKernel(reinterpret_cast<const void*>(&stream_marker), dim3(1), dim3(1), nullptr, 0, stream),
             "launching kscope's stream marker on the caller's stream");
}

}  // namespace kscope::device

// The FMA chain of lines_kernels.cu built without -lineinfo: code without line information, which
// line sampling must attribute to its function and offset, never drop.
#include <stdexcept>
#include <string>

#include "lines_kernels.hpp"

namespace kscope_lines_test {

__global__ void fma_without_lines(float* out, int iterations) {
  float x = static_cast<float>(threadIdx.x);
#pragma unroll 1
  for (int k = 0; k < iterations; ++k)
    for (int j = 0; j < 16; ++j) x = fmaf(x, 1.0001f, 0.5f);
  out[blockIdx.x * blockDim.x + threadIdx.x] = x;
}

void launch_fma_without_lines(float* out, int iterations, cudaStream_t stream) {
  fma_without_lines<<<kFmaBlocks, kFmaThreads, 0, stream>>>(out, iterations);
  if (cudaGetLastError() != cudaSuccess) throw std::runtime_error("fma_without_lines<<<>>> failed");
}

}  // namespace kscope_lines_test

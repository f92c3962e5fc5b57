#include "test_counters_kernels.hpp"

#include "gpu_test_support.hpp"

namespace kscope_counters_test {

__global__ void fma_kernel(float* sink, int iterations) {
  float x[8];
#pragma unroll
  for (int k = 0; k < 8; ++k) x[k] = threadIdx.x * 1e-3f + k;
  for (int i = 0; i < iterations; ++i) {
#pragma unroll
    for (int k = 0; k < 8; ++k) x[k] = fmaf(x[k], 0.9999f, 1e-4f);
  }
  float sum = 0;
#pragma unroll
  for (int k = 0; k < 8; ++k) sum += x[k];
  if (sum == 1.2345f) *sink = sum;  // keeps the chains alive; never true
}

void launch_fma(float* sink, int iterations, cudaStream_t stream) {
  int device = 0, sms = 0;
  kscope_test::check(cudaGetDevice(&device), "cudaGetDevice");
  kscope_test::check(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device), "cudaDeviceGetAttribute");
  fma_kernel<<<4 * sms, 256, 0, stream>>>(sink, iterations);
  kscope_test::check(cudaGetLastError(), "fma_kernel");
}

}  // namespace kscope_counters_test

#pragma once
// A compute-bound kernel for the counter backend's tests, its ncu comparison and its overhead
// benchmark (the memory-bound ones, copy and read, are in gpu_test_support.hpp).
#include <cuda_runtime_api.h>

namespace kscope_counters_test {

// As kscope reports it.
inline constexpr const char* kFmaKernel = "kscope_counters_test::fma_kernel(float*, int)";

// 8 independent FFMA chains of `iterations` steps in every thread of 4 blocks of 256 threads per
// SM: the FMA pipe stays busy and memory idle (one store per thread, never taken).
void launch_fma(float* sink, int iterations, cudaStream_t stream = 0);

}  // namespace kscope_counters_test

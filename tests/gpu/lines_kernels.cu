// Kernels of known hot lines (lines_kernels.hpp). Markers in comments name the lines the tests look
// for: keep each on the line it names.
#include <algorithm>
#include <fstream>
#include <numeric>
#include <random>
#include <stdexcept>
#include <vector>

#include "lines_kernels.hpp"

namespace kscope_lines_test {
namespace {

void check(cudaError_t status, const char* call) {
  if (status != cudaSuccess) throw std::runtime_error(std::string(call) + ": " + cudaGetErrorString(status));
}

}  // namespace

__global__ void chase(const int* next, float* out, int steps) {
  int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x) * 991;  // < 2^24 for 132 x 128 threads
  float acc = 1.0f;
  for (int k = 0; k < steps; ++k) {
    i = next[i];  // LOAD
    acc = acc * 1.0001f + 0.5f; acc = acc * 0.9999f + 0.25f;  // ARITH
  }
  out[blockIdx.x * blockDim.x + threadIdx.x] = acc + static_cast<float>(i);
}

__global__ void barrier_bound(float* scratch, int iterations) {
  __shared__ float shared[1024];
  float x = scratch[threadIdx.x];
  for (int k = 0; k < iterations; ++k) {
    if (threadIdx.x < 32)
      for (int j = 0; j < 64; ++j) x = x * 1.0001f + 0.5f;
    shared[threadIdx.x] = x;
    __syncthreads();  // BARRIER
    x += shared[1023 - threadIdx.x] * 1e-6f;
    __syncthreads();
  }
  scratch[blockIdx.x * blockDim.x + threadIdx.x] = x;
}

#define KSCOPE_FMA4(x) x = fmaf(x, 1.0001f, 0.5f); x = fmaf(x, 0.9999f, 0.25f); x = fmaf(x, 1.0001f, 0.5f); x = fmaf(x, 0.9999f, 0.25f)

__global__ void fma_chain(float* out, int iterations) {
  float x = static_cast<float>(threadIdx.x);
#pragma unroll 1
  for (int k = 0; k < iterations; ++k) {
    KSCOPE_FMA4(x); KSCOPE_FMA4(x); KSCOPE_FMA4(x); KSCOPE_FMA4(x);  // FMA
  }
  out[blockIdx.x * blockDim.x + threadIdx.x] = x;
}

__device__ __forceinline__ float sixteen_fmas(float x) {
  KSCOPE_FMA4(x); KSCOPE_FMA4(x); KSCOPE_FMA4(x); KSCOPE_FMA4(x);  // HELPER
  return x;
}

__global__ void fma_helper(float* out, int iterations) {
  float x = static_cast<float>(threadIdx.x);
#pragma unroll 1
  for (int k = 0; k < iterations; ++k) {
    x = sixteen_fmas(x);  // CALL
  }
  out[blockIdx.x * blockDim.x + threadIdx.x] = x;
}

std::string kernels_file() { return __FILE__; }

int marked_line(const std::string& marker) {
  std::ifstream in(__FILE__);
  int number = 0;
  for (std::string line; std::getline(in, line);) {
    ++number;
    if (line.find("// " + marker) != std::string::npos && line.find("marker") == std::string::npos) return number;
  }
  throw std::runtime_error("no line marked " + marker + " in " + std::string(__FILE__));
}

Chase::Chase(std::size_t n) : n_(n) {
  // One cycle through every index, in random order: each load misses the caches.
  std::vector<int> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin() + 1, order.end(), std::mt19937(42));
  std::vector<int> next(n);
  for (std::size_t k = 0; k < n; ++k) next[order[k]] = order[(k + 1) % n];
  check(cudaMalloc(&next_, n * sizeof(int)), "cudaMalloc(chase)");
  check(cudaMalloc(&out_, 132 * 128 * sizeof(float)), "cudaMalloc(chase out)");
  check(cudaMemcpy(next_, next.data(), n * sizeof(int), cudaMemcpyHostToDevice), "cudaMemcpy(chase)");
}

Chase::~Chase() {
  cudaFree(next_);
  cudaFree(out_);
}

void Chase::launch(int steps, cudaStream_t stream) const {
  chase<<<132, 128, 0, stream>>>(next_, out_, steps);
  check(cudaGetLastError(), "chase<<<>>>");
}

void launch_barrier_bound(float* scratch, int iterations, cudaStream_t stream) {
  barrier_bound<<<132, 1024, 0, stream>>>(scratch, iterations);
  check(cudaGetLastError(), "barrier_bound<<<>>>");
}

void launch_fma_chain(float* out, int iterations, cudaStream_t stream) {
  fma_chain<<<kFmaBlocks, kFmaThreads, 0, stream>>>(out, iterations);
  check(cudaGetLastError(), "fma_chain<<<>>>");
}

void launch_fma_helper(float* out, int iterations, cudaStream_t stream) {
  fma_helper<<<kFmaBlocks, kFmaThreads, 0, stream>>>(out, iterations);
  check(cudaGetLastError(), "fma_helper<<<>>>");
}

}  // namespace kscope_lines_test

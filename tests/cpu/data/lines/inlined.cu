// A fixture for the cubin line-table reader (tests/cpu/test_cubin_lines.cpp): nvcc -arch=sm_90 -lineinfo -cubin.
__device__ __forceinline__ float inner(float x) {
  return sqrtf(x) * 3.0f;
}
__device__ __forceinline__ float outer(float x, float y) {
  float s = inner(x);
  return s + y;
}
__global__ void chase(const int* next, float* out, int n) {
  int i = threadIdx.x;
  float acc = 0;
  for (int k = 0; k < n; ++k) {
    i = next[i];
    acc = outer(acc + i, acc);
  }
  out[threadIdx.x] = acc;
}
__global__ void sync_heavy(float* x, int n) {
  __shared__ float s[256];
  for (int k = 0; k < n; ++k) {
    s[threadIdx.x] = x[threadIdx.x] + k;
    __syncthreads();
    x[threadIdx.x] = s[255 - threadIdx.x];
  }
}

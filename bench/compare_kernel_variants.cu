// What bounds kscope's device comparison (src/device/gpu_tensor_checks.cu, compare_kernel) on a
// GPU: the kernel as written (v0) against variants that leave out the relative error's division,
// know the dtype when compiled, load four elements before judging them, or divide only where the
// result could raise the largest relative error so far; registers, blocks per SM and GPU time at
// 1M and 16M float32 elements, three grid sizes, against a copy of the same bytes. An experiment for
// docs/evaluate.md's figures, not a test (the variants are not kscope's code):
//   bash scripts/compare_variants_gpu.sh
#include <cuda_runtime_api.h>
#include <algorithm>
#include <climits>
#include <cstdio>
#include <vector>
#include "core/model/tensor_elements.hpp"
using namespace kscope;
namespace d = kscope::detail;
constexpr unsigned kThreads = 256;
struct Totals { unsigned long long mismatched, max_abs, max_rel, first; };
__device__ std::size_t first_item() { return blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; }
__device__ std::size_t item_stride() { return std::size_t(gridDim.x) * blockDim.x; }
__device__ unsigned long long larger(unsigned long long a, unsigned long long b) { return a > b ? a : b; }
__device__ unsigned long long error_bits(double e) { return e != e ? 0ull : (unsigned long long)__double_as_longlong(e); }
template <class C> __device__ unsigned long long across_warp(unsigned long long v, C c) {
  for (int o = 16; o > 0; o /= 2) v = c(v, __shfl_down_sync(0xffffffffu, v, o)); return v; }
struct Sum { __device__ unsigned long long operator()(unsigned long long a, unsigned long long b) const { return a + b; } };
struct Lg { __device__ unsigned long long operator()(unsigned long long a, unsigned long long b) const { return a > b ? a : b; } };
struct Sm { __device__ unsigned long long operator()(unsigned long long a, unsigned long long b) const { return a < b ? a : b; } };
template <class C> __device__ unsigned long long across_block(unsigned long long v, unsigned long long id, C c) {
  __shared__ unsigned long long w[kThreads / 32];
  v = across_warp(v, c); __syncthreads();
  if (threadIdx.x % 32 == 0) w[threadIdx.x / 32] = v; __syncthreads();
  v = threadIdx.x < kThreads / 32 ? w[threadIdx.x] : id;
  return threadIdx.x < 32 ? across_warp(v, c) : id; }
__device__ void finish(Totals* t, unsigned long long mm, unsigned long long ma, unsigned long long mr, unsigned long long f) {
  mm = across_block(mm, 0ull, Sum{}); ma = across_block(ma, 0ull, Lg{}); mr = across_block(mr, 0ull, Lg{});
  f = across_block(f, ULLONG_MAX, Sm{});
  if (threadIdx.x) return;
  if (mm) { atomicAdd(&t->mismatched, mm); atomicMin(&t->first, f); }
  if (ma) atomicMax(&t->max_abs, ma); if (mr) atomicMax(&t->max_rel, mr); }

// V0: as the product.
__global__ void v0(const void* c, const void* r, std::size_t n, DType dt, bool al, double atol, double rtol, double lg, Totals* t) {
  unsigned long long mm = 0, ma = 0, mr = 0, f = ULLONG_MAX;
  for (std::size_t i = first_item(); i < n; i += item_stride()) {
    d::ElementVerdict v = d::judge(d::element(c, i, dt, al), d::element(r, i, dt, al), atol, rtol, lg);
    ma = larger(ma, error_bits(v.abs_error)); mr = larger(mr, error_bits(v.rel_error));
    if (!v.passes && mm++ == 0) f = i;
  }
  finish(t, mm, ma, mr, f);
}
// V1: no relative error at all (upper bound on what skipping the division gains).
__global__ void v1(const void* c, const void* r, std::size_t n, DType dt, bool al, double atol, double rtol, double lg, Totals* t) {
  unsigned long long mm = 0, ma = 0, f = ULLONG_MAX;
  for (std::size_t i = first_item(); i < n; i += item_stride()) {
    const double cv = d::element(c, i, dt, al), rv = d::element(r, i, dt, al);
    const double e = fabs(cv - rv);
    ma = larger(ma, error_bits(e));
    if (!(e <= atol + rtol * fabs(rv)) && mm++ == 0) f = i;
  }
  finish(t, mm, ma, 0, f);
}
// V2: V0 with four elements loaded before any is judged (more loads in flight per thread).
__global__ void v2(const void* c, const void* r, std::size_t n, DType dt, bool al, double atol, double rtol, double lg, Totals* t) {
  unsigned long long mm = 0, ma = 0, mr = 0, f = ULLONG_MAX;
  const std::size_t s = item_stride();
  for (std::size_t base = first_item(); base < n; base += 4 * s) {
    double cv[4], rv[4];
#pragma unroll
    for (int k = 0; k < 4; ++k) { std::size_t i = base + k * s; cv[k] = i < n ? d::element(c, i, dt, al) : 0; rv[k] = i < n ? d::element(r, i, dt, al) : 0; }
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      std::size_t i = base + k * s; if (i >= n) break;
      d::ElementVerdict v = d::judge(cv[k], rv[k], atol, rtol, lg);
      ma = larger(ma, error_bits(v.abs_error)); mr = larger(mr, error_bits(v.rel_error));
      if (!v.passes && mm++ == 0) f = i;
    }
  }
  finish(t, mm, ma, mr, f);
}
// V3: float32 known at compile time (no per-element dtype switch), otherwise V0.
__global__ void v3(const void* c, const void* r, std::size_t n, DType, bool, double atol, double rtol, double lg, Totals* t) {
  unsigned long long mm = 0, ma = 0, mr = 0, f = ULLONG_MAX;
  const float* cf = static_cast<const float*>(c); const float* rf = static_cast<const float*>(r);
  for (std::size_t i = first_item(); i < n; i += item_stride()) {
    d::ElementVerdict v = d::judge(cf[i], rf[i], atol, rtol, lg);
    ma = larger(ma, error_bits(v.abs_error)); mr = larger(mr, error_bits(v.rel_error));
    if (!v.passes && mm++ == 0) f = i;
  }
  finish(t, mm, ma, mr, f);
}
// One element judged as judge() does, its relative error divided out only where it could raise
// `most_rel`, the thread's largest so far (error > most_rel * scale, rounded down, is then false).
__device__ void judge_filtered(double cv, double rv, double atol, double rtol, double lg, double& most_rel,
                               unsigned long long& mm, unsigned long long& ma, unsigned long long& mr,
                               unsigned long long& f, std::size_t i) {
  const double e = fabs(cv - rv);
  const double scale = rtol > 0 ? fmax(fabs(rv), atol / rtol) : fabs(rv);
  bool passes;
  double rel = 0, abs_e = e;
  if (cv != cv || rv != rv || isinf(cv) || isinf(rv)) {
    const d::ElementVerdict v = d::judge(cv, rv, atol, rtol, lg);
    passes = v.passes, abs_e = v.abs_error, rel = v.rel_error;
  } else {
    if (e > __dmul_rd(most_rel, scale)) rel = e == 0 ? 0.0 : scale > 0 ? e / scale : INFINITY;
    passes = d::is_extreme(cv, lg) || d::is_extreme(rv, lg) ? cv == rv : e <= atol + rtol * fabs(rv);
  }
  if (rel > most_rel) most_rel = rel;
  ma = larger(ma, error_bits(abs_e));
  mr = larger(mr, error_bits(rel));
  if (!passes && mm++ == 0) f = i;
}
// V4: V0 with that filter.
__global__ void v4(const void* c, const void* r, std::size_t n, DType dt, bool al, double atol, double rtol, double lg, Totals* t) {
  unsigned long long mm = 0, ma = 0, mr = 0, f = ULLONG_MAX;
  double most_rel = 0;
  for (std::size_t i = first_item(); i < n; i += item_stride())
    judge_filtered(d::element(c, i, dt, al), d::element(r, i, dt, al), atol, rtol, lg, most_rel, mm, ma, mr, f, i);
  finish(t, mm, ma, mr, f);
}
// V5: V3 and V4 together with V2's four loads.
__global__ void v5(const void* c, const void* r, std::size_t n, DType, bool, double atol, double rtol, double lg, Totals* t) {
  unsigned long long mm = 0, ma = 0, mr = 0, f = ULLONG_MAX;
  double most_rel = 0;
  const float* cf = static_cast<const float*>(c);
  const float* rf = static_cast<const float*>(r);
  const std::size_t s = item_stride();
  for (std::size_t base = first_item(); base < n; base += 4 * s) {
    float cv[4], rv[4];
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      const std::size_t i = base + k * s;
      cv[k] = i < n ? cf[i] : 0.f;
      rv[k] = i < n ? rf[i] : 0.f;
    }
#pragma unroll
    for (int k = 0; k < 4; ++k)
      if (base + k * s < n) judge_filtered(cv[k], rv[k], atol, rtol, lg, most_rel, mm, ma, mr, f, base + k * s);
  }
  finish(t, mm, ma, mr, f);
}
__global__ void fill(float* a, float* b, std::size_t n) {
  for (std::size_t i = first_item(); i < n; i += item_stride()) { float x = (float)((i * 2654435761u) % 1000) * 1e-3f + 0.5f; a[i] = x; b[i] = x * (1 + 1e-7f * (i % 3)); } }
__global__ void copyk(const float4* a, float4* b, std::size_t n) { for (std::size_t i = first_item(); i < n; i += item_stride()) b[i] = a[i]; }

typedef void (*K)(const void*, const void*, std::size_t, DType, bool, double, double, double, Totals*);
int main() {
  int sms, tps; cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0); cudaDeviceGetAttribute(&tps, cudaDevAttrMaxThreadsPerMultiProcessor, 0);
  const unsigned resident = sms * (tps / kThreads);
  K ks[] = {v0, v1, v2, v3, v4, v5}; const char* names[] = {"v0 product", "v1 no relative error", "v2 four loads first", "v3 float32 known", "v4 division only where it could raise the max", "v5 float32 + four loads + division filter"};
  for (int k = 0; k < 6; ++k) { cudaFuncAttributes a; cudaFuncGetAttributes(&a, ks[k]); int blocks; cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, ks[k], kThreads, 0);
    printf("KERNEL %-48s regs %3d blocks/SM %d (grid assumes %d)\n", names[k], a.numRegs, blocks, tps / kThreads); }
  cudaEvent_t e0, e1; cudaEventCreate(&e0); cudaEventCreate(&e1);
  for (std::size_t n : {std::size_t(1) << 20, std::size_t(1) << 24}) {
    float *a, *b, *x; Totals* t; cudaMalloc(&a, n * 4); cudaMalloc(&b, n * 4); cudaMalloc(&x, n * 4); cudaMalloc(&t, sizeof(Totals));
    fill<<<1024, 256>>>(a, b, n);
    auto timed = [&](auto f) { std::vector<float> ms; for (int rep = 0; rep < 21; ++rep) { cudaMemsetAsync(x, 0, n * 4); cudaEventRecord(e0); f(); cudaEventRecord(e1); cudaEventSynchronize(e1); float m; cudaEventElapsedTime(&m, e0, e1); ms.push_back(m); } std::sort(ms.begin(), ms.end()); return ms[10] * 1000; };
    const float copy_us = timed([&] { copyk<<<resident, 256>>>((const float4*)a, (float4*)x, n / 4); });
    printf("N %zu copy of %zu MB: %.1f us\n", n, n * 4 >> 20, copy_us);
    for (int k = 0; k < 6; ++k)
      for (unsigned grid : {std::min<unsigned>((n + 255) / 256, resident), std::min<unsigned>((n + 255) / 256, 4 * resident), 4096u}) {
        Totals host{};
        const float us = timed([&] { cudaMemsetAsync(t, 0, sizeof(Totals)); ks[k]<<<grid, kThreads>>>(a, b, n, DType::f32, true, 1e-5, 1e-5, 3.4028234663852886e38, t); });
        cudaMemcpy(&host, t, sizeof host, cudaMemcpyDeviceToHost);
        printf("N %zu %-48s grid %5u: %7.1f us, of copy rate %.2f  (mismatched %llu max_abs %llx max_rel %llx) %s\n", n, names[k], grid, us, copy_us / us, host.mismatched, host.max_abs, host.max_rel, cudaGetErrorString(cudaGetLastError()));
      }
    cudaFree(a); cudaFree(b); cudaFree(x); cudaFree(t);
  }
}

#include "gpu_test_support.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <vector>

namespace kscope_test {
namespace {

constexpr int kBlock = 256;

__device__ std::uint64_t global_timer_ns() {
  std::uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

void check_launch(const char* kernel) { check(cudaGetLastError(), kernel); }

unsigned blocks_for(std::size_t items) {
  return static_cast<unsigned>((items + kBlock - 1) / kBlock);
}

}  // namespace

__global__ void spin_kernel(std::uint64_t ns) {
  const std::uint64_t start = global_timer_ns();
  while (global_timer_ns() - start < ns) {
  }
}

__global__ void timed_spin_kernel(std::uint64_t ns, std::uint64_t* stamps) {
  const std::uint64_t start = global_timer_ns();
  std::uint64_t now = start;
  while (now - start < ns) now = global_timer_ns();
  if (threadIdx.x == 0) {
    stamps[0] = start;
    stamps[1] = now;
  }
}

__global__ void spin_until_open_kernel(const volatile int* gate, std::uint64_t timeout_ns) {
  const std::uint64_t start = global_timer_ns();
  while (*gate == 0 && global_timer_ns() - start < timeout_ns) {
  }
}

__global__ void empty_kernel() {}

__global__ void globaltimer_tick_kernel(std::uint64_t* smallest_step) {
  std::uint64_t previous = global_timer_ns(), smallest = ~std::uint64_t(0);
  const std::uint64_t end = previous + 1'000'000;
  while (previous < end) {
    const std::uint64_t now = global_timer_ns();
    if (now != previous && now - previous < smallest) smallest = now - previous;
    previous = now;
  }
  *smallest_step = smallest;
}

__global__ void copy_kernel(const float4* __restrict__ in, float4* __restrict__ out,
                            std::size_t n4) {
  const std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
  if (i < n4) out[i] = in[i];
}

// kEvictLast: the load with an evict_last eviction priority, as Triton compiles
// eviction_policy='evict_last' (createpolicy, then a load with the policy as its cache hint).
template <bool kEvictLast>
__device__ void read_one(const float4* __restrict__ in, std::size_t n4, float* sink) {
  const std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
  if (i >= n4) return;
  float4 v;
#if __CUDA_ARCH__ >= 800  // eviction priorities: Ampere on
  if constexpr (kEvictLast) {
    std::uint64_t policy = 0;
    asm volatile("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(policy));
    asm volatile("ld.global.L2::cache_hint.v4.f32 {%0, %1, %2, %3}, [%4], %5;"
                 : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w)
                 : "l"(in + i), "l"(policy));
  } else
#endif
  {
    v = in[i];
  }
  const float sum = v.x + v.y + v.z + v.w;
  if (sum != sum) *sink = sum;  // never true for real data; keeps the load alive
}

// Two kernels, not one template: the counters tests match the plain one's name.
__global__ void read_kernel(const float4* __restrict__ in, std::size_t n4, float* sink) {
  read_one<false>(in, n4, sink);
}

__global__ void read_evict_last_kernel(const float4* __restrict__ in, std::size_t n4, float* sink) {
  read_one<true>(in, n4, sink);
}

std::string no_gpu_reason() {
  int count = 0;
  if (cudaError_t status = cudaGetDeviceCount(&count); status != cudaSuccess) {
    return std::string("cudaGetDeviceCount: ") + cudaGetErrorName(status) + " (" +
           cudaGetErrorString(status) + ")";
  }
  return count == 0 ? "cudaGetDeviceCount found no device" : "";
}

bool report_no_gpu() {
  const std::string reason = no_gpu_reason();
  if (!reason.empty()) std::fprintf(stderr, "no CUDA device: %s\n", reason.c_str());
  return !reason.empty();
}

void check(cudaError_t status, const char* call) {
  if (status != cudaSuccess) {
    throw std::runtime_error(std::string(call) + " failed: " + cudaGetErrorName(status) + " (" +
                             cudaGetErrorString(status) + ")");
  }
}

void launch_spin(std::uint64_t ns, cudaStream_t stream) {
  spin_kernel<<<1, 32, 0, stream>>>(ns);
  check_launch("spin_kernel");
}

void launch_timed_spin(std::uint64_t ns, std::uint64_t* stamps, cudaStream_t stream) {
  timed_spin_kernel<<<1, 32, 0, stream>>>(ns, stamps);
  check_launch("timed_spin_kernel");
}

int measure_or_plain(int argc, char** argv, const std::function<int()>& measure,
                     const std::function<int(int reps)>& plain) {
  const bool measuring = argc == 2 && std::strcmp(argv[1], "--measure") == 0;
  const bool plain_mode = argc == 3 && std::strcmp(argv[1], "--plain") == 0;
  if (!measuring && !plain_mode) {
    std::fprintf(stderr, "usage: %s --measure | --plain REPS\n", argv[0]);
    return 64;
  }
  if (report_no_gpu()) return 2;
  try {
    return measuring ? measure() : plain(std::atoi(argv[2]));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: %s\n", argv[0], e.what());
    return 1;
  }
}

std::uint64_t globaltimer_tick_ns() {
  std::uint64_t* step = nullptr;
  check(cudaMalloc(&step, sizeof *step), "cudaMalloc");
  globaltimer_tick_kernel<<<1, 1>>>(step);
  std::uint64_t result = 0;
  cudaError_t status = cudaGetLastError();
  if (status == cudaSuccess) status = cudaMemcpy(&result, step, sizeof result, cudaMemcpyDeviceToHost);
  cudaFree(step);
  check(status, "globaltimer_tick_kernel");
  return result;
}

HostGate::HostGate() {
  void* flag = nullptr;
  check(cudaHostAlloc(&flag, sizeof(int), cudaHostAllocMapped), "cudaHostAlloc(gate)");
  host_ = static_cast<volatile int*>(flag);
  *host_ = 0;
  check(cudaHostGetDevicePointer(reinterpret_cast<void**>(&device_), flag, 0), "cudaHostGetDevicePointer(gate)");
}

HostGate::~HostGate() { cudaFreeHost(const_cast<int*>(host_)); }

void HostGate::close() { __atomic_store_n(host_, 0, __ATOMIC_SEQ_CST); }

void HostGate::open() { __atomic_store_n(host_, 1, __ATOMIC_SEQ_CST); }

void launch_spin_until_open(const HostGate& gate, std::uint64_t timeout_ns, cudaStream_t stream) {
  spin_until_open_kernel<<<1, 1, 0, stream>>>(gate.device_, timeout_ns);
  check_launch("spin_until_open_kernel");
}

void launch_empty(cudaStream_t stream) {
  empty_kernel<<<1, 32, 0, stream>>>();
  check_launch("empty_kernel");
}

void launch_copy(const float* in, float* out, std::size_t n, cudaStream_t stream) {
  const std::size_t n4 = n / 4;
  copy_kernel<<<blocks_for(n4), kBlock, 0, stream>>>(reinterpret_cast<const float4*>(in),
                                                      reinterpret_cast<float4*>(out), n4);
  check_launch("copy_kernel");
}

void launch_read(const float* in, std::size_t n, float* sink, cudaStream_t stream) {
  const std::size_t n4 = n / 4;
  read_kernel<<<blocks_for(n4), kBlock, 0, stream>>>(reinterpret_cast<const float4*>(in), n4, sink);
  check_launch("read_kernel");
}

void launch_read_evict_last(const float* in, std::size_t n, float* sink, cudaStream_t stream) {
  const std::size_t n4 = n / 4;
  read_evict_last_kernel<<<blocks_for(n4), kBlock, 0, stream>>>(reinterpret_cast<const float4*>(in), n4, sink);
  check_launch("read_evict_last_kernel");
}

__global__ void fill_kernel(float* data, std::size_t n, float value) {
  const std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
  if (i < n) data[i] = value;
}

DeviceFloats::DeviceFloats(std::size_t n) : n_(n) {
  check(cudaMalloc(&data_, n * sizeof(float)), "cudaMalloc");
  fill_kernel<<<blocks_for(n), kBlock>>>(data_, n, 1.0f);
  check_launch("fill_kernel");
  check(cudaDeviceSynchronize(), "cudaDeviceSynchronize(fill)");
}

DeviceFloats::~DeviceFloats() { cudaFree(data_); }

Event::Event() { check(cudaEventCreate(&event_), "cudaEventCreate"); }

Event::~Event() { cudaEventDestroy(event_); }

double copy_bandwidth_gbps(std::size_t bytes, int reps) {
  DeviceFloats src(bytes / sizeof(float)), dst(bytes / sizeof(float));
  Event start, stop;
  std::vector<double> ns;
  for (int i = -2; i < reps; ++i) {
    check(cudaEventRecord(start.get()), "cudaEventRecord");
    check(cudaMemcpyAsync(dst.get(), src.get(), bytes, cudaMemcpyDeviceToDevice), "cudaMemcpyAsync");
    check(cudaEventRecord(stop.get()), "cudaEventRecord");
    check(cudaEventSynchronize(stop.get()), "cudaEventSynchronize");
    float ms = 0;
    check(cudaEventElapsedTime(&ms, start.get(), stop.get()), "cudaEventElapsedTime");
    if (i >= 0) ns.push_back(ms * 1e6);
  }
  std::sort(ns.begin(), ns.end());
  return 2.0 * static_cast<double>(bytes) / ns[ns.size() / 2];  // bytes per ns = GB/s
}

}  // namespace kscope_test

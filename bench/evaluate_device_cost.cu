// What evaluate() costs on the device beside the calls it measures. Its checks, per kind and for one
// read run's whole series (as core/decisions/evaluator.cpp issues it), at 1M and 16M float elements:
// the GPU time between two events, the host time of the call, and the bytes read against a
// device-to-device copy of the same bytes (the DRAM roof kscope can reach). And the persisting-L2
// reset before each of its flushes: whether the host waits for the GPU in it.
// scripts/evaluate_cost_check.sh runs it.
//   evaluate_device_cost   # CHECKS <size> <what> gpu_us .. host_us .. read_MB .. of_copy_rate ..; RESET ...
#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "device/gpu_tensor_checks.hpp"

namespace {

void check(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return;
  std::fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(e));
  std::exit(1);
}

__global__ void fill(float* data, std::size_t n, unsigned salt) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n; i += std::size_t(gridDim.x) * blockDim.x)
    data[i] = static_cast<float>((i * 2654435761u + salt) % 1000003u) / 1000003.0f - 0.5f;
}

// Spins for `cycles` of the SM's clock: the GPU busy for a known time.
__global__ void spin(long long cycles) {
  const long long start = clock64();
  while (clock64() - start < cycles) {
  }
}

double host_us_of(const std::function<void()>& work) {
  const auto t0 = std::chrono::steady_clock::now();
  work();
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
}

// cudaCtxResetPersistingL2Cache's host time with the GPU idle and with it busy for about 2 ms: if
// the second is about 2 ms longer, the reset waits for the GPU.
void persisting_reset_cost() {
  int device = 0, clock_khz = 0;
  check(cudaGetDevice(&device), "cudaGetDevice");
  check(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, device), "cudaDeviceGetAttribute");
  const auto reset = [] { check(cudaCtxResetPersistingL2Cache(), "cudaCtxResetPersistingL2Cache"); };
  std::vector<double> idle, busy;
  for (int r = 0; r < 11; ++r) {
    check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
    idle.push_back(host_us_of(reset));
    spin<<<1, 1>>>(2LL * clock_khz);  // about 2 ms at the SM's clock
    busy.push_back(host_us_of(reset));
  }
  check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  std::sort(idle.begin(), idle.end());
  std::sort(busy.begin(), busy.end());
  std::printf("RESET cudaCtxResetPersistingL2Cache host_us: GPU idle %.1f, GPU busy for ~2000 us %.1f (medians of 11)\n",
              idle[idle.size() / 2], busy[busy.size() / 2]);
}

struct Timing {
  double gpu_us, host_us;
};

// The median of `repeats` timings of `work`, each between two events on the legacy stream, after a drain.
Timing timed(const std::function<void()>& work, int repeats = 15) {
  cudaEvent_t start, stop;
  check(cudaEventCreate(&start), "cudaEventCreate");
  check(cudaEventCreate(&stop), "cudaEventCreate");
  std::vector<double> gpu, host;
  for (int r = 0; r < repeats + 1; ++r) {
    check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
    const auto t0 = std::chrono::steady_clock::now();
    check(cudaEventRecord(start, cudaStreamLegacy), "cudaEventRecord");
    work();
    check(cudaEventRecord(stop, cudaStreamLegacy), "cudaEventRecord");
    check(cudaEventSynchronize(stop), "cudaEventSynchronize");
    const auto t1 = std::chrono::steady_clock::now();
    float ms = 0;
    check(cudaEventElapsedTime(&ms, start, stop), "cudaEventElapsedTime");
    if (r == 0) continue;  // the first: allocations, module loading
    gpu.push_back(1e3 * ms);
    host.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
  }
  std::sort(gpu.begin(), gpu.end());
  std::sort(host.begin(), host.end());
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  return {gpu[gpu.size() / 2], host[host.size() / 2]};
}

}  // namespace

int main() {
  persisting_reset_cost();
  using kscope::DType;
  using kscope::TensorView;
  for (std::size_t n : {std::size_t{1} << 20, std::size_t{1} << 24}) {
    const std::size_t bytes = n * sizeof(float);
    std::vector<float*> buffers(7);
    for (std::size_t b = 0; b < buffers.size(); ++b) {
      check(cudaMalloc(&buffers[b], bytes), "cudaMalloc");
      fill<<<1024, 256>>>(buffers[b], n, static_cast<unsigned>(b));
    }
    const auto view = [&](std::size_t b) {
      TensorView v;
      v.data = buffers[b];
      v.dtype = DType::f32;
      v.shape = {static_cast<std::int64_t>(n)};
      v.memory = kscope::MemorySpace::device;
      return v;
    };
    const TensorView cand = view(0), ref = view(1);
    const std::vector<TensorView> inputs{view(2), view(3), view(4), view(5)};
    kscope::device::GpuTensorChecks checks;
    const double copy_us =
        timed([&] { check(cudaMemcpyAsync(buffers[6], buffers[0], bytes, cudaMemcpyDeviceToDevice, cudaStreamLegacy), "copy"); })
            .gpu_us;
    // A copy reads and writes each byte: its rate counts both.
    const double roof_mb_per_us = 2.0 * bytes / 1e6 / copy_us;
    const auto report = [&](const char* what, double mb, Timing t) {
      std::printf("CHECKS %zu %-34s gpu_us %9.1f host_us %9.1f read_MB %7.1f of_copy_rate %5.2f\n", n, what, t.gpu_us,
                  t.host_us, mb, mb / t.gpu_us / roof_mb_per_us);
    };
    const double mb = bytes / 1e6;
    std::printf("CHECKS %zu copy of %.1f MB: %.1f us (%.0f GB/s, reads and writes)\n", n, mb, copy_us, roof_mb_per_us * 1e3);
    report("checksums of 1", mb, timed([&] { checks.checksums({cand}); }));
    report("checksums of 6", 6 * mb, timed([&] {
             std::vector<TensorView> six{cand, ref};
             six.insert(six.end(), inputs.begin(), inputs.end());
             checks.checksums(six);
           }));
    report("compare 1 pair", 2 * mb, timed([&] { checks.compare({cand}, {ref}, {{1e-5, 1e-5}}); }));
    // evaluate()'s default atol: two more reads of the reference for its typical magnitude.
    report("compare 1 pair, atol from its scale", 4 * mb,
           timed([&] { checks.compare({cand}, {ref}, {{0, 1e-5, true}}); }));
    // One read run as the evaluator issues it: each side's outputs as its call closes, then both
    // outputs and all inputs, the comparison with atol from the reference's scale, the checksums read.
    report("a read run's checks", 12 * mb, timed([&] {
             checks.start_checksums({cand});
             checks.start_checksums({ref});
             std::vector<TensorView> batch{cand, ref};
             batch.insert(batch.end(), inputs.begin(), inputs.end());
             checks.start_checksums(batch);
             checks.compare({cand}, {ref}, {{0, 1e-5, true}});
             checks.finish_checksums();
           }));
    for (float* b : buffers) cudaFree(b);
  }
  return 0;
}

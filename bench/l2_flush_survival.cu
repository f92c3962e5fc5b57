// Which L2 lines survive kscope's cold-cache flush (device/l2_flush.hpp), and what the persisting-L2
// reset before it (cudaCtxResetPersistingL2Cache) changes: which ways of keeping lines in the L2 the
// reset is needed against. (Its host time is bench/evaluate_device_cost.cu's RESET line.)
//
// A 4 MiB buffer is loaded into the L2 one way, then flushed (or not), then read by one thread
// chasing pointers through its lines in a random order, timed by the SM's clock: the cycles a load
// tell an L2 hit from a DRAM access. Ways to load it:
//   normal          plain loads
//   prefetch_last   prefetch.global.L2::evict_last (a PTX hint: no API call a tracer sees)
//   policy_last     createpolicy.fractional.L2::evict_last with ld.global.L2::cache_hint (CUTLASS's way)
//   window          plain loads on a stream whose access-policy window marks the buffer persisting,
//                   with no persisting set-aside (cudaLimitPersistingL2CacheSize 0)
//   window_setaside the same with the largest set-aside the device allows
// Each is chased after the flush alone and after the reset then the flush, next to a warm chase (no
// flush) and a cold one (plain loads, flush): kept = (cold - cycles) / (cold - warm), 0 when the flush
// left nothing of the buffer in the L2 and 1 when it left it all. scripts/l2_flush_check.sh runs it.
//   l2_flush_survival   # SURVIVAL <way> <flush|reset+flush> cycles_per_load .. kept ..
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "device/l2_flush.hpp"
#include "gpu_test_support.hpp"

namespace {

using kscope_test::check;

constexpr std::size_t kBufferBytes = std::size_t{4} << 20;
constexpr std::size_t kLineWords = 128 / sizeof(std::uint32_t);
constexpr std::size_t kLines = kBufferBytes / 128;
constexpr int kRepeats = 5;

enum class Load { normal, prefetch_last, policy_last };

// Reads the first word of every line once, with the eviction priority `load` asks for.
__global__ void load_lines(const std::uint32_t* data, std::size_t lines, Load load, std::uint32_t* sink) {
  std::uint32_t sum = 0;
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < lines;
       i += std::size_t(gridDim.x) * blockDim.x) {
    const std::uint32_t* p = data + i * kLineWords;
    std::uint32_t v = 0;
#if __CUDA_ARCH__ >= 800  // eviction priorities: Ampere on (older GPUs have no persisting L2 either)
    if (load == Load::prefetch_last) {
      asm volatile("prefetch.global.L2::evict_last [%0];" ::"l"(p));
    } else if (load == Load::policy_last) {
      std::uint64_t policy = 0;
      asm volatile("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(policy));
      asm volatile("ld.global.L2::cache_hint.u32 %0, [%1], %2;" : "=r"(v) : "l"(p), "l"(policy));
    } else
#endif
    {
      asm volatile("ld.global.cg.u32 %0, [%1];" : "=r"(v) : "l"(p));
    }
    sum += v;
  }
  if (sum == 0xffffffffu) *sink = sum;  // keeps the loads
}

// One thread follows the chain through every line (L2 only: .cg), the SM's cycles per load.
__global__ void chase(const std::uint32_t* data, std::size_t lines, double* cycles_per_load) {
  std::uint32_t at = 0;
  const long long start = clock64();
  for (std::size_t i = 0; i < lines; ++i) {
    asm volatile("ld.global.cg.u32 %0, [%1];" : "=r"(at) : "l"(data + at));
  }
  const long long end = clock64();
  *cycles_per_load = static_cast<double>(end - start) / lines + (at == 0xffffffffu ? 1 : 0);
}

struct Case {
  std::string way;
  Load load = Load::normal;
  bool window = false;
  bool set_aside = false;
};

class Probe {
 public:
  Probe() : flusher_(device()) {
    check(cudaMalloc(&data_, kBufferBytes), "cudaMalloc(buffer)");
    check(cudaMalloc(&sink_, sizeof(std::uint32_t)), "cudaMalloc(sink)");
    check(cudaMalloc(&cycles_, sizeof(double)), "cudaMalloc(cycles)");
    check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate");
    check(cudaDeviceGetAttribute(&set_aside_max_, cudaDevAttrMaxPersistingL2CacheSize, device()),
          "cudaDeviceGetAttribute(cudaDevAttrMaxPersistingL2CacheSize)");
    // A random cycle through the lines (Sattolo): each line's first word is the next line's offset.
    std::vector<std::uint32_t> order(kLines);
    std::iota(order.begin(), order.end(), 0u);
    std::mt19937 rng(12345);
    for (std::size_t i = kLines - 1; i > 0; --i) std::swap(order[i], order[std::uniform_int_distribution<std::size_t>(0, i - 1)(rng)]);
    std::vector<std::uint32_t> words(kBufferBytes / sizeof(std::uint32_t), 0);
    for (std::size_t i = 0; i < kLines; ++i) words[order[i] * kLineWords] = order[(i + 1) % kLines] * kLineWords;
    check(cudaMemcpy(data_, words.data(), kBufferBytes, cudaMemcpyHostToDevice), "cudaMemcpy(chain)");
  }
  ~Probe() {
    cudaStreamDestroy(stream_);
    cudaFree(cycles_);
    cudaFree(sink_);
    cudaFree(data_);
  }
  Probe(const Probe&) = delete;
  Probe& operator=(const Probe&) = delete;

  int set_aside_max() const { return set_aside_max_; }

  // The median cycles a load of the chase after loading the buffer as `c` says, then `after`.
  enum class After { nothing, flush, reset_flush };
  double cycles(const Case& c, After after) {
    std::vector<double> runs;
    for (int r = 0; r < kRepeats; ++r) runs.push_back(once(c, after));
    std::sort(runs.begin(), runs.end());
    return runs[runs.size() / 2];
  }

 private:
  static int device() {
    int d = 0;
    check(cudaGetDevice(&d), "cudaGetDevice");
    return d;
  }

  double once(const Case& c, After after) {
    // A clean start: no persisting lines, no set-aside, no window, nothing of the buffer cached.
    check(cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, 0), "cudaDeviceSetLimit(0)");
    check(cudaCtxResetPersistingL2Cache(), "cudaCtxResetPersistingL2Cache");
    flusher_.enqueue(cudaStreamLegacy);
    check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
    if (c.set_aside)
      check(cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, set_aside_max_), "cudaDeviceSetLimit(set-aside)");
    cudaStreamAttrValue window{};
    if (c.window) {
      window.accessPolicyWindow.base_ptr = data_;
      window.accessPolicyWindow.num_bytes = kBufferBytes;
      window.accessPolicyWindow.hitRatio = 1.0f;
      window.accessPolicyWindow.hitProp = cudaAccessPropertyPersisting;
      window.accessPolicyWindow.missProp = cudaAccessPropertyStreaming;
    }
    check(cudaStreamSetAttribute(stream_, cudaStreamAttributeAccessPolicyWindow, &window), "cudaStreamSetAttribute");
    load_lines<<<64, 256, 0, stream_>>>(data_, kLines, c.load, sink_);
    check(cudaStreamSynchronize(stream_), "load_lines");
    cudaStreamAttrValue none{};
    check(cudaStreamSetAttribute(stream_, cudaStreamAttributeAccessPolicyWindow, &none), "cudaStreamSetAttribute(none)");
    if (after == After::reset_flush) check(cudaCtxResetPersistingL2Cache(), "cudaCtxResetPersistingL2Cache");
    if (after != After::nothing) flusher_.enqueue(cudaStreamLegacy);
    chase<<<1, 1>>>(data_, kLines, cycles_);
    double result = 0;
    check(cudaMemcpy(&result, cycles_, sizeof(double), cudaMemcpyDeviceToHost), "chase");
    check(cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, 0), "cudaDeviceSetLimit(0)");
    return result;
  }

  kscope::device::L2Flusher flusher_;
  std::uint32_t* data_ = nullptr;
  std::uint32_t* sink_ = nullptr;
  double* cycles_ = nullptr;
  cudaStream_t stream_ = nullptr;
  int set_aside_max_ = 0;
};

void survive() {
  Probe probe;
  const Case plain{"normal"};
  const double warm = probe.cycles(plain, Probe::After::nothing);
  const double cold = probe.cycles(plain, Probe::After::flush);
  std::printf("SURVIVAL buffer %zu KiB, set-aside max %d KiB: warm (no flush) %.0f cycles a load, cold (flush) %.0f\n",
              kBufferBytes >> 10, probe.set_aside_max() >> 10, warm, cold);
  const std::vector<Case> cases{{"normal"},
                                {"prefetch_last", Load::prefetch_last},
                                {"policy_last", Load::policy_last},
                                {"window", Load::normal, true, false},
                                {"window_setaside", Load::normal, true, true}};
  for (const Case& c : cases) {
    if (c.set_aside && probe.set_aside_max() == 0) {
      std::printf("SURVIVAL %-16s skipped: the device has no persisting set-aside\n", c.way.c_str());
      continue;
    }
    for (auto after : {Probe::After::flush, Probe::After::reset_flush}) {
      const double cycles = probe.cycles(c, after);
      std::printf("SURVIVAL %-16s %-12s cycles_per_load %6.0f kept %5.2f\n", c.way.c_str(),
                  after == Probe::After::flush ? "flush" : "reset+flush", cycles, (cold - cycles) / (cold - warm));
    }
  }
}

}  // namespace

int main() {
  if (kscope_test::report_no_gpu()) return 2;
  try {
    survive();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "l2_flush_survival: %s\n", e.what());
    return 1;
  }
  return 0;
}

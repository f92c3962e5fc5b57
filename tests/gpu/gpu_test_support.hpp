#pragma once
// Kernels of known cost and small RAII helpers for kscope's GPU tests, the overhead benchmark and
// the ncu comparison. The kernels live in gpu_test_support.cu; these host launchers throw
// std::runtime_error when a launch fails.
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

namespace kscope_test {

// Demangled names, as kscope reports them (and as ignore_kernel_list matches them).
inline constexpr const char* kSpinKernel = "kscope_test::spin_kernel(unsigned long)";
inline constexpr const char* kEmptyKernel = "kscope_test::empty_kernel()";

// Empty when a CUDA device is usable, otherwise why not (for GTEST_SKIP and exit messages).
std::string no_gpu_reason();

// For the benchmark programs: true, after saying why on stderr, when no CUDA device is usable.
bool report_no_gpu();

// Throws std::runtime_error naming the call unless status is cudaSuccess.
void check(cudaError_t status, const char* call);

// One block that runs for `ns` nanoseconds of %globaltimer time, whatever the clocks (less one
// timer update at most: spin_bounds.hpp says what timers may report for it).
void launch_spin(std::uint64_t ns, cudaStream_t stream = 0);
// launch_spin that also writes the %globaltimer readings of its first and last instruction to
// stamps[0] and stamps[1] (device memory): the kernel's own view of when it ran.
void launch_timed_spin(std::uint64_t ns, std::uint64_t* stamps, cudaStream_t stream = 0);
// The %globaltimer update interval now: the smallest nonzero step one thread sees between
// back-to-back reads over 1 ms (synchronises the device).
std::uint64_t globaltimer_tick_ns();
// A flag in mapped, pinned host memory: a kernel spinning on it (launch_spin_until_open) ends when
// the host chooses, whatever the host's scheduling.
class HostGate {
 public:
  HostGate();  // closed
  ~HostGate();
  HostGate(const HostGate&) = delete;
  HostGate& operator=(const HostGate&) = delete;
  void close();
  void open();

 private:
  friend void launch_spin_until_open(const HostGate& gate, std::uint64_t timeout_ns, cudaStream_t stream);
  volatile int* host_ = nullptr;
  int* device_ = nullptr;
};
// One thread spinning until `gate` opens, or for `timeout_ns` of %globaltimer time at most.
void launch_spin_until_open(const HostGate& gate, std::uint64_t timeout_ns, cudaStream_t stream = 0);
// One block of 32 threads doing nothing: the launch-overhead floor.
void launch_empty(cudaStream_t stream = 0);
// out[i] = in[i] for n floats (n a multiple of 4), 16-byte loads and stores.
void launch_copy(const float* in, float* out, std::size_t n, cudaStream_t stream = 0);
// Reads n floats (n a multiple of 4) and writes nothing unless their sum is NaN.
void launch_read(const float* in, std::size_t n, float* sink, cudaStream_t stream = 0);
// The same with an evict_last eviction priority on every load (Triton's eviction_policy='evict_last'):
// lines the L2 keeps before others, even without a persisting set-aside.
void launch_read_evict_last(const float* in, std::size_t n, float* sink, cudaStream_t stream = 0);

// Device memory of n floats, filled with 1.0f.
class DeviceFloats {
 public:
  explicit DeviceFloats(std::size_t n);
  ~DeviceFloats();
  DeviceFloats(const DeviceFloats&) = delete;
  DeviceFloats& operator=(const DeviceFloats&) = delete;
  float* get() const { return data_; }
  std::size_t size() const { return n_; }

 private:
  float* data_ = nullptr;
  std::size_t n_;
};

// A CUDA event for the tests' own reference timings.
class Event {
 public:
  Event();
  ~Event();
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  cudaEvent_t get() const { return event_; }

 private:
  cudaEvent_t event_ = nullptr;
};

// main() of a program that scripts run under a profiler and compare: "PROGRAM --measure" returns
// measure(), "PROGRAM --plain REPS" plain(REPS). Exits 64 on bad usage, 2 without a GPU, 1 when
// either throws (saying why on stderr).
int measure_or_plain(int argc, char** argv, const std::function<int()>& measure,
                     const std::function<int(int reps)>& plain);

// Device-to-device cudaMemcpyAsync bandwidth in GB/s (bytes read + written), median of `reps`
// event-timed copies of `bytes` after two warm-up copies.
double copy_bandwidth_gbps(std::size_t bytes, int reps = 10);

}  // namespace kscope_test

// First statement of every GPU test: skips it, saying why, where no CUDA device is usable.
#define KSCOPE_REQUIRE_GPU()                                                      \
  do {                                                                            \
    if (const std::string reason = kscope_test::no_gpu_reason(); !reason.empty()) \
      GTEST_SKIP() << "no CUDA device: " << reason;                               \
  } while (0)

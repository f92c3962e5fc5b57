#pragma once
// Kernels whose time goes to one known line for one known reason, for the line sampling GPU tests,
// the comparison with Nsight Compute's source counters and the overhead benchmark. Built with
// -lineinfo (lines_kernels.cu), except lines_nolineinfo.cu. Each launcher throws std::runtime_error
// when its launch fails.
#include <cuda_runtime_api.h>

#include <cstddef>
#include <string>

namespace kscope_lines_test {

// The line of lines_kernels.cu holding `marker` ("LOAD", "ARITH", "BARRIER", "FMA", "CALL",
// "HELPER"), and the file as the compiler named it.
int marked_line(const std::string& marker);
std::string kernels_file();

// A pointer chase through a random permutation of `n` ints (far larger than the L2): each
// iteration's load depends on the one before (line LOAD), then a short arithmetic chain (ARITH).
class Chase {
 public:
  explicit Chase(std::size_t n = std::size_t(1) << 24);  // 64 MiB
  ~Chase();
  Chase(const Chase&) = delete;
  Chase& operator=(const Chase&) = delete;
  void launch(int steps, cudaStream_t stream = 0) const;  // one warp per SM sub-partition
 private:
  int* next_ = nullptr;
  float* out_ = nullptr;
  std::size_t n_;
};

// 1024-thread blocks whose first warp works while the other 31 wait at __syncthreads (BARRIER).
void launch_barrier_bound(float* scratch, int iterations, cudaStream_t stream = 0);
// A dependent chain of 16 FMAs per iteration on one line (FMA), one warp per sub-partition: the
// next FMA waits for the one before. `out` holds one float per thread of 132 x 128.
void launch_fma_chain(float* out, int iterations, cudaStream_t stream = 0);
// Its FMAs written in an inlined helper (HELPER), called on the line CALL.
void launch_fma_helper(float* out, int iterations, cudaStream_t stream = 0);
// The FMA chain built without -lineinfo (lines_nolineinfo.cu): no line information.
void launch_fma_without_lines(float* out, int iterations, cudaStream_t stream = 0);

inline constexpr int kFmaBlocks = 132, kFmaThreads = 128, kFmasPerIteration = 16;

// Demangled kernel names, as kscope reports them.
inline constexpr const char* kChaseKernel = "kscope_lines_test::chase(int const*, float*, int)";  // as the demangler spells it
inline constexpr const char* kFmaKernel = "kscope_lines_test::fma_chain(float*, int)";

}  // namespace kscope_lines_test

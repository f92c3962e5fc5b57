// Another process on the GPU for OtherProcess.AProcessSpinningOnTheGpuIsFlaggedOnTheRunsItTouched:
// launches one-block spins of 10 ms back to back for the seconds given, and writes "spinning" to
// stdout once the first has run. Exits 2 without a GPU, 1 when a launch fails.
//   gpu_spinner SECONDS
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>

#include "gpu_test_support.hpp"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: gpu_spinner SECONDS\n");
    return 64;
  }
  if (kscope_test::report_no_gpu()) return 2;
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(std::atof(argv[1]));
  try {
    kscope_test::launch_spin(10'000'000);
    kscope_test::check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
    std::printf("spinning\n");
    std::fflush(stdout);
    while (std::chrono::steady_clock::now() < end) {
      kscope_test::launch_spin(10'000'000);
      kscope_test::check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gpu_spinner: %s\n", e.what());
    return 1;
  }
  return 0;
}

// kscope's main example: y = a*x + y swept over size and precision, one annotated kernel per
// config, durations from CUPTI, bandwidth derived from them (the sweep: saxpy_sweep.hpp).
//
//   ./saxpy          prints the summary table and writes saxpy.csv and saxpy.json
//   (saxpy_simulated: the same sweep on the simulated backend, on any machine)
//
// Exit code: 0 on success, 2 when no CUDA device is usable, 1 on any other error.
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdio>
#include <iostream>
#include <stdexcept>
#include <string>

#include "kscope/kscope.hpp"
#include "saxpy_sweep.hpp"

// At namespace scope, so that the Kernel column reads "void saxpy<float>(...)".
template <typename T>
__global__ void saxpy(std::size_t n, float a, const T* __restrict__ x, T* __restrict__ y) {
  const std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
  if (i < n) y[i] = static_cast<T>(a * static_cast<float>(x[i]) + static_cast<float>(y[i]));
}

namespace {

void check(cudaError_t status, const char* call) {
  if (status != cudaSuccess) {
    throw std::runtime_error(std::string(call) + " failed: " + cudaGetErrorString(status));
  }
}

// Device memory for x and y, large enough for the biggest config in either precision.
class Buffers {
 public:
  explicit Buffers(std::size_t bytes) {
    check(cudaMalloc(&x_, bytes), "cudaMalloc(x)");
    check(cudaMalloc(&y_, bytes), "cudaMalloc(y)");
    check(cudaMemset(x_, 0x3c, bytes), "cudaMemset(x)");  // 0x3c3c: ~1.06 as f16, ~0.011 as f32
    check(cudaMemset(y_, 0x3c, bytes), "cudaMemset(y)");
  }
  ~Buffers() {
    cudaFree(x_);
    cudaFree(y_);
  }
  Buffers(const Buffers&) = delete;
  Buffers& operator=(const Buffers&) = delete;

  template <typename T>
  void launch(std::size_t n) const {
    constexpr int kBlock = 256;
    const auto blocks = static_cast<unsigned>((n + kBlock - 1) / kBlock);
    saxpy<T><<<blocks, kBlock>>>(n, 2.0f, static_cast<const T*>(x_), static_cast<T*>(y_));
    check(cudaGetLastError(), "saxpy launch");
  }

 private:
  void* x_ = nullptr;
  void* y_ = nullptr;
};

}  // namespace

int main() {
  int devices = 0;
  if (cudaError_t status = cudaGetDeviceCount(&devices); status != cudaSuccess || devices == 0) {
    std::cerr << "saxpy: no usable CUDA device ("
              << (status != cudaSuccess ? cudaGetErrorString(status) : "none found")
              << "): check nvidia-smi, the driver and CUDA_VISIBLE_DEVICES\n";
    return 2;
  }
  try {
    kscope::Settings settings = saxpy_example::settings();
    settings.backend = kscope::Backend::cupti;

    const Buffers buffers(std::size_t(4) << 24);
    const kscope::Results results = kscope::profile(saxpy_example::sweep(), settings, [&](const kscope::Config& c) {
      const auto n = static_cast<std::size_t>(c.get<std::int64_t>("n"));
      kscope::Annotation region("saxpy");
      if (c.get<std::string>("dtype") == "f16") {
        buffers.launch<__half>(n);
      } else {
        buffers.launch<float>(n);
      }
    });

    std::cout << results;
    results.write_csv("saxpy.csv");
    results.write_json("saxpy.json");
    std::cout << "wrote saxpy.csv and saxpy.json\n";
    return 0;
  } catch (const kscope::BackendError& e) {
    std::cerr << "saxpy: the GPU cannot be measured here: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "saxpy: " << e.what() << "\n";
    return 1;
  }
}

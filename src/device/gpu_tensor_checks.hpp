#pragma once
// evaluate()'s checks of tensors in a GPU's memory (kscope/tensor_checks.hpp): kernels that apply
// core/model/tensor_elements.hpp's rules, the same functions the host checks (core/decisions/host_tensor_checks.cpp)
// apply, so that both give the same answers (counts and bits, never sums of doubles in another order). A batch
// of tensors is a few launches on the legacy default stream (one for all its checksums) and one wait for it.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "kscope/tensor.hpp"
#include "kscope/tensor_checks.hpp"

namespace kscope::device {

class GpuTensorChecks final : public TensorChecks {
 public:
  GpuTensorChecks() = default;
  ~GpuTensorChecks() override;
  GpuTensorChecks(const GpuTensorChecks&) = delete;
  GpuTensorChecks& operator=(const GpuTensorChecks&) = delete;

  // Each throws ConfigError for a view whose memory the current device cannot read (host memory
  // CUDA does not know, another device's memory), CudaError for a failed CUDA call.
  std::vector<std::uint64_t> checksums(const std::vector<TensorView>& tensors) override;
  // checksums() in two halves: the launches (no wait), then every started one's value, in order.
  void start_checksums(const std::vector<TensorView>& tensors) override;
  std::vector<std::uint64_t> finish_checksums() override;
  // Pairs of the same dtype and element count: the caller checks. The typical magnitudes that
  // tolerances add are found and applied on the device: the batch waits for it once.
  std::vector<TensorComparison> compare(const std::vector<TensorView>& candidates,
                                        const std::vector<TensorView>& references,
                                        const std::vector<Tolerance>& tolerances) override;

  struct Totals;  // what the kernels find for one pair
  struct Magnitudes;  // the histograms of one tensor's typical magnitude

 private:
  // Results of `count` checks: device and pinned host arrays of at least that many.
  template <class T>
  struct Buffers {
    T* device = nullptr;
    T* host = nullptr;  // pinned, so that the copy back is one asynchronous copy
    std::size_t capacity = 0;
    ~Buffers();
    void reserve(std::size_t count);
  };
  // Waits for the started checksums and moves their values into finished_.
  void keep_started();

  // The results' buffers, one set per device kept for the process: allocating and freeing pinned
  // memory took about a millisecond and a half of every evaluate() on an H100. Evaluations take
  // turns (one session at a time), so they share it.
  struct Pool {
    Buffers<Totals> totals;                // the comparisons
    Buffers<Magnitudes> magnitudes;        // their references' typical magnitudes
    Buffers<unsigned long long> sums;      // checksums(), which waits
    Buffers<unsigned long long> started;   // the checksums started and not yet finished
    // The blocks the device runs at once: the grid of the kernels that add into one result (more
    // blocks would only queue more adds into it).
    unsigned resident_blocks = 0;
  };
  // The current device's pool, found at the first check.
  Pool& pool();

  Pool* pool_ = nullptr;
  std::size_t started_count_ = 0;
  std::vector<std::uint64_t> finished_;  // started ones already read back (when started_ had to grow)
};

}  // namespace kscope::device

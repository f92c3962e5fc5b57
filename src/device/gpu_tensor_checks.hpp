#pragma once
// evaluate()'s checks of tensors in a GPU's memory (kscope/tensor_checks.hpp): kernels that apply
// core/model/tensor_elements.hpp's rules, the same functions the host checks (core/decisions/host_tensor_checks.cpp)
// apply, so that both give the same answers (counts and bits, never sums of doubles in another order). A batch of tensors is one series of launches on
// the legacy default stream and one wait for it.
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
  std::vector<double> typical_magnitudes(const std::vector<TensorView>& tensors) override;
  std::vector<std::uint64_t> checksums(const std::vector<TensorView>& tensors) override;
  // checksums() in two halves: the launches (no wait), then every started one's value, in order.
  void start_checksums(const std::vector<TensorView>& tensors) override;
  std::vector<std::uint64_t> finish_checksums() override;
  // Pairs of the same dtype and element count: the caller checks.
  std::vector<TensorComparison> compare(const std::vector<TensorView>& candidates,
                                        const std::vector<TensorView>& references,
                                        const std::vector<Tolerance>& tolerances) override;

  struct Totals;  // what the kernels find for one tensor (or pair)
  struct Magnitudes;  // the histograms of one tensor's typical magnitude

 private:
  // Fresh totals in device memory for `count` checks, set by a kernel on the legacy stream.
  Totals* fresh_totals(std::size_t count);
  // Waits for the legacy stream and reads the first `count` totals back.
  const Totals* read_totals(std::size_t count);
  // One batch over `tensors`: launch_one(tensor, its totals) for each non-empty one, then
  // read_one(its totals) for each (zeroed for an empty one).
  template <class Result, class LaunchOne, class ReadOne>
  std::vector<Result> per_tensor(const std::vector<TensorView>& tensors, LaunchOne launch_one, ReadOne read_one);

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

  Buffers<Totals> totals_;   // the checks that wait
  Buffers<Totals> started_;  // the checksums started and not yet finished
  Buffers<Magnitudes> magnitudes_;
  std::size_t started_count_ = 0;
  std::vector<std::uint64_t> finished_;  // started ones already read back (when started_ had to grow)
};

}  // namespace kscope::device

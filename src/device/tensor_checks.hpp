#pragma once
// evaluate()'s checks of tensors in device memory (kscope::CallObserver's sum_of_squares, compare
// and checksum): kernels that apply core/tensor_elements.hpp's rules, the same functions the host
// checks (core/tensor_checks.cpp) apply, so that both give the same answers (the sum of squares up
// to the order of its additions). Each check runs on the legacy default stream and waits for it.
#include <cstdint>

#include "kscope/tensor.hpp"

namespace kscope::device {

class TensorChecks {
 public:
  TensorChecks() = default;
  ~TensorChecks();
  TensorChecks(const TensorChecks&) = delete;
  TensorChecks& operator=(const TensorChecks&) = delete;

  // Each throws ConfigError for a view whose memory the current device cannot read (host memory
  // CUDA does not know, another device's memory), CudaError for a failed CUDA call.
  double sum_of_squares(const TensorView& tensor);
  // Same dtype and element count: the caller checks.
  TensorComparison compare(const TensorView& candidate, const TensorView& reference, double atol, double rtol);
  std::uint64_t checksum(const TensorView& tensor);

  struct Totals;  // what the kernels add up, in device memory

 private:
  // Zeroed totals in device memory for one check (allocated once).
  Totals* fresh_totals();
  Totals read_totals();

  Totals* totals_ = nullptr;
};

}  // namespace kscope::device

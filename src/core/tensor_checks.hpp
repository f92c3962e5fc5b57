#pragma once
// The checks evaluate() makes of tensors: compared, checksummed, measured for scale, and whether two
// share memory. Host tensors are read here; device tensors through the backend's CallObserver.
#include <cstdint>

#include "kscope/measurement_backend.hpp"
#include "kscope/tensor.hpp"

namespace kscope::detail {

// The same checks of host memory (the simulated backend's "device" memory too).
double host_sum_of_squares(const TensorView& tensor);
TensorComparison host_compare(const TensorView& candidate, const TensorView& reference, double atol, double rtol);
std::uint64_t host_checksum(const TensorView& tensor);

class TensorChecks {
 public:
  explicit TensorChecks(CallObserver& device) : device_(device) {}

  double root_mean_square(const TensorView& tensor);
  // Same dtype and element count: the caller checks.
  TensorComparison compare(const TensorView& candidate, const TensorView& reference, double atol, double rtol);
  std::uint64_t checksum(const TensorView& tensor);

 private:
  CallObserver& device_;
};

// Whether the two views' bytes overlap (in the same memory space).
bool overlaps(const TensorView& a, const TensorView& b);

}  // namespace kscope::detail

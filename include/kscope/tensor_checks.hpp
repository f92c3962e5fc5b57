#pragma once
// What evaluate() (kscope/evaluate.hpp) reads of tensors in a device's memory: each one's typical
// magnitude and checksum, and each candidate output against its reference. Tensors in host memory
// kscope reads itself; these are the device's half. kscope has two: CUDA kernels for a GPU's memory
// (the cupti backend's device), and reads where the views point for the simulated backend's, whose
// device memory is the host's. The backend registry pairs a backend with its device's checks
// (BackendDefinition::tensor_checks): the backend itself never sees them.
#include <cstdint>
#include <vector>

#include "kscope/tensor.hpp"

namespace kscope {

class TensorChecks {
 public:
  virtual ~TensorChecks() = default;
  // Each call takes many tensors and waits for the device once. The typical magnitude is the
  // median magnitude of the finite, nonzero elements other than the dtype's extremes, cut to 8
  // mantissa bits; the checksum a sum of the tensor's mixed 8-byte words modulo 2^64. Both must
  // give the host's values bit for bit (core/tensor_elements.hpp has the rules).
  virtual std::vector<double> typical_magnitudes(const std::vector<TensorView>& tensors) = 0;
  virtual std::vector<std::uint64_t> checksums(const std::vector<TensorView>& tensors) = 0;  // one per tensor
  // checksums() without a wait: launched now; finish_checksums() gives the values of every start
  // since the last finish, in order, waiting only for what the device has not done yet.
  virtual void start_checksums(const std::vector<TensorView>& tensors) = 0;
  virtual std::vector<std::uint64_t> finish_checksums() = 0;
  // Each candidate against its reference (pairs of the same dtype and element count) within its
  // tolerance.
  virtual std::vector<TensorComparison> compare(const std::vector<TensorView>& candidates,
                                                const std::vector<TensorView>& references,
                                                const std::vector<Tolerance>& tolerances) = 0;
};

}  // namespace kscope

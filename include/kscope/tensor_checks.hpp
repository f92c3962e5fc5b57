#pragma once
// What evaluate() (kscope/evaluate.hpp) reads of tensors in a device's memory: each one's checksum,
// and each candidate output against its reference. Tensors in host memory
// kscope reads itself; these are the device's half. kscope has two: CUDA kernels for a GPU's memory
// (the cupti backend's device), and reads where the views point for the simulated backend's, whose
// device memory is the host's. The backend registry pairs a backend with its device's checks
// (BackendDefinition::tensor_checks): the backend itself never sees them.
#include <cstdint>
#include <vector>

#include "kscope/tensor.hpp"

namespace kscope {

// The reads of tensors in one kind of device memory that evaluate() makes. Each call takes many
// tensors and waits for the device once; each value must be the host's bit for bit
// (core/model/tensor_elements.hpp has the rules).
class TensorChecks {
 public:
  virtual ~TensorChecks() = default;
  // Each tensor's checksum: the sum of its mixed 8-byte words modulo 2^64.
  virtual std::vector<std::uint64_t> checksums(const std::vector<TensorView>& tensors) = 0;
  // checksums() without a wait: launched now, their values given by finish_checksums().
  virtual void start_checksums(const std::vector<TensorView>& tensors) = 0;
  // The checksums of every start since the last finish, in order, waiting only for what the device
  // has not done yet.
  virtual std::vector<std::uint64_t> finish_checksums() = 0;
  // Each candidate against its reference (pairs of the same dtype and element count) within its
  // tolerance. A tensor's typical magnitude (Tolerance::add_scaled_magnitude) is the median magnitude
  // of its finite, nonzero elements other than the dtype's extremes, cut to 8 mantissa bits (0 where
  // none counts).
  virtual std::vector<TensorComparison> compare(const std::vector<TensorView>& candidates,
                                                const std::vector<TensorView>& references,
                                                const std::vector<Tolerance>& tolerances) = 0;
};

}  // namespace kscope

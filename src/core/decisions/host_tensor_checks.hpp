#pragma once
// The tensor checks read on the host (core/model/tensor_elements.hpp's rules): of tensors in host memory,
// and, as HostTensorChecks, of the simulated backend's device memory, which is the host's.
#include <cstdint>
#include <vector>

#include "kscope/tensor.hpp"
#include "kscope/tensor_checks.hpp"

namespace kscope::detail {

// The checks of one tensor where it points.
double host_typical_magnitude(const TensorView& tensor);
TensorComparison host_compare(const TensorView& candidate, const TensorView& reference, double atol, double rtol);
TensorComparison host_compare(const TensorView& candidate, const TensorView& reference, const Tolerance& tolerance);
std::uint64_t host_checksum(const TensorView& tensor);

// TensorChecks that read every view where it points: a started checksum is computed at once, kept
// until finish_checksums().
class HostTensorChecks final : public TensorChecks {
 public:
  std::vector<std::uint64_t> checksums(const std::vector<TensorView>& tensors) override;
  void start_checksums(const std::vector<TensorView>& tensors) override;
  std::vector<std::uint64_t> finish_checksums() override;
  std::vector<TensorComparison> compare(const std::vector<TensorView>& candidates,
                                        const std::vector<TensorView>& references,
                                        const std::vector<Tolerance>& tolerances) override;

 private:
  std::vector<std::uint64_t> started_;  // the checksums started since the last finish
};

}  // namespace kscope::detail

#pragma once
// The tensor checks evaluate() makes (kscope/tensor_checks.hpp), of tensors in either memory: those
// in host memory read here, those in device memory by the device's checks, each batch with one wait
// for the device. And whether two tensors share memory, which needs no reading.
#include <cstdint>
#include <optional>
#include <vector>

#include "kscope/tensor.hpp"
#include "kscope/tensor_checks.hpp"

namespace kscope::detail {

class ChecksByMemory final : public TensorChecks {
 public:
  explicit ChecksByMemory(TensorChecks& device) : device_(device) {}

  std::vector<std::uint64_t> checksums(const std::vector<TensorView>& tensors) override;
  void start_checksums(const std::vector<TensorView>& tensors) override;
  std::vector<std::uint64_t> finish_checksums() override;
  // Pairs of the same dtype, element count and memory: the caller checks.
  std::vector<TensorComparison> compare(const std::vector<TensorView>& candidates,
                                        const std::vector<TensorView>& references,
                                        const std::vector<Tolerance>& tolerances) override;

 private:
  TensorChecks& device_;
  // Per started tensor: its checksum (host memory), or nullopt for one the device gives at finish.
  std::vector<std::optional<std::uint64_t>> started_;
};

// Whether the two views' bytes overlap (in the same memory space).
bool overlaps(const TensorView& a, const TensorView& b);

}  // namespace kscope::detail

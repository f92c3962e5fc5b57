#pragma once
// The checks evaluate() makes of tensors: compared, checksummed, their typical magnitude (atol's
// scale, core/tensor_elements.hpp's rule), and whether two share memory. Host tensors are read
// here; device tensors through the backend's CallObserver, each batch with one wait for the GPU.
#include <cstdint>
#include <optional>
#include <vector>

#include "kscope/measurement_backend.hpp"
#include "kscope/tensor.hpp"

namespace kscope::detail {

// The checks of one tensor in host memory (the simulated backend's "device" memory too).
double host_typical_magnitude(const TensorView& tensor);
TensorComparison host_compare(const TensorView& candidate, const TensorView& reference, double atol, double rtol);
std::uint64_t host_checksum(const TensorView& tensor);

class TensorChecks {
 public:
  explicit TensorChecks(CallObserver& device) : device_(device) {}

  std::vector<double> typical_magnitudes(const std::vector<TensorView>& tensors);
  std::vector<std::uint64_t> checksums(const std::vector<TensorView>& tensors);
  // checksums() without a wait for the GPU: started now, their values (of every start since the
  // last finish, in order) given by finish_checksums().
  void start_checksums(const std::vector<TensorView>& tensors);
  std::vector<std::uint64_t> finish_checksums();
  // Pairs of the same dtype, element count and memory: the caller checks.
  std::vector<TensorComparison> compare(const std::vector<TensorView>& candidates,
                                        const std::vector<TensorView>& references,
                                        const std::vector<Tolerance>& tolerances);

 private:
  CallObserver& device_;
  // Per started tensor: its checksum (host memory), or nullopt for one the device gives at finish.
  std::vector<std::optional<std::uint64_t>> started_;
};

// Whether the two views' bytes overlap (in the same memory space).
bool overlaps(const TensorView& a, const TensorView& b);

}  // namespace kscope::detail

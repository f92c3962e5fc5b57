#pragma once
// The cupti backend's CallObserver (kscope::evaluate): copies and fills traced with the kernels,
// calls flagged after the measured call returned, kscope's stream marker on the caller's stream,
// persisting-L2 carve-outs found and reset, and the checks of tensors in device memory.
#include <cstdint>
#include <string>
#include <vector>

#include "device/tensor_checks.hpp"
#include "kscope/measurement_backend.hpp"

namespace kscope::cupti {

class CuptiCalls final : public CallObserver {
 public:
  void observe_calls() override;
  // Whether observe_calls() was called: the backend's sessions trace copies and fills, and its cache
  // flushes make persisting L2 lines normal first.
  bool observing() const { return observing_; }

  void call_returned(const RegionContext& region, std::uintptr_t stream) override;
  std::string take_persisting_l2(std::uintptr_t stream) override;
  std::vector<double> typical_magnitudes(const std::vector<TensorView>& tensors) override {
    return checks_.typical_magnitudes(tensors);
  }
  std::vector<std::uint64_t> checksums(const std::vector<TensorView>& tensors) override {
    return checks_.checksums(tensors);
  }
  void start_checksums(const std::vector<TensorView>& tensors) override { checks_.start_checksums(tensors); }
  std::vector<std::uint64_t> finish_checksums() override { return checks_.finish_checksums(); }
  std::vector<TensorComparison> compare(const std::vector<TensorView>& candidates,
                                        const std::vector<TensorView>& references,
                                        const std::vector<Tolerance>& tolerances) override {
    return checks_.compare(candidates, references, tolerances);
  }

 private:
  bool observing_ = false;
  std::size_t persisting_l2_before_ = 0;  // the context's set-aside before the first measured call
  device::TensorChecks checks_;
};

}  // namespace kscope::cupti

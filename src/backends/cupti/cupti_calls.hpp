#pragma once
// The cupti backend's CallObserver (kscope::evaluate): copies and fills traced with the kernels,
// calls flagged after the measured call returned, kscope's stream marker on the caller's stream,
// persisting-L2 carve-outs found and reset.
#include <cstdint>
#include <string>

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

 private:
  bool observing_ = false;
  std::size_t persisting_l2_before_ = 0;  // the context's set-aside before the first measured call
};

}  // namespace kscope::cupti

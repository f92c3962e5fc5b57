#include "backends/ncu/ncu_routes.hpp"

#include "backends/ncu/child_session.hpp"
#include "backends/ncu/child_target.hpp"
#include "backends/ncu/parent_session.hpp"
#include "core/log.hpp"
#include "kscope/errors.hpp"

namespace kscope::ncu {
namespace {

struct TargetState {
  std::optional<ChildTarget> target;
  std::string error;  // malformed variables, reported at every profile() call
};

// Read once, at the first profile() call: a process that ncu started for kscope stays the child
// whatever it does to its environment later, and never starts another ncu.
const TargetState& target_state() {
  static const TargetState state = [] {
    try {
      return TargetState{child_target_from_environment(), ""};
    } catch (const Error& e) {
      return TargetState{std::nullopt, e.what()};
    }
  }();
  return state;
}

class ChildTargetRoute final : public detail::Route {
 public:
  explicit ChildTargetRoute(const ChildTarget& target) : target_(target) {}
  Results profile(const Sweep& sweep, const Settings& settings, const Body& body) override {
    run_child_session(sweep, settings, body, target_);
  }

 private:
  const ChildTarget& target_;
};

// A call the child does not profile: it was measured in the parent.
class SkippedInChildRoute final : public detail::Route {
 public:
  SkippedInChildRoute(std::size_t call, std::size_t target) : call_(call), target_(target) {}
  Results profile(const Sweep&, const Settings&, const Body&) override {
    detail::log_debug("profiled under Nsight Compute: profile() call #" + std::to_string(call_) +
                      " returns empty results; only call #" + std::to_string(target_) + " is profiled here");
    return Results{};
  }

 private:
  std::size_t call_, target_;
};

class UnderNcuRoute final : public detail::Route {
 public:
  explicit UnderNcuRoute(std::size_t call) : call_(call) {}
  Results profile(const Sweep& sweep, const Settings& settings, const Body&) override {
    return profile_under_ncu(sweep, settings, call_);
  }

 private:
  std::size_t call_;
};

}  // namespace

std::unique_ptr<detail::Route> route(const Sweep&, const Settings& settings, std::size_t call) {
  const TargetState& state = target_state();
  if (!state.error.empty()) throw BackendError(state.error);
  if (const auto& target = state.target) {
    if (call == target->ordinal) return std::make_unique<ChildTargetRoute>(*target);
    return std::make_unique<SkippedInChildRoute>(call, target->ordinal);
  }
  if (settings.backend == Backend::ncu) return std::make_unique<UnderNcuRoute>(call);
  return nullptr;
}

}  // namespace kscope::ncu

#include "backends/ncu/ncu_routes.hpp"

#include "backends/ncu/child_session.hpp"
#include "backends/ncu/child_target.hpp"
#include "backends/ncu/parent_session.hpp"
#include "core/model/log.hpp"
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

}  // namespace

std::optional<Results> route(const Sweep& sweep, const Settings& settings, const Body& body, std::size_t call) {
  const TargetState& state = target_state();
  if (!state.error.empty()) throw BackendError(state.error);
  if (const auto& target = state.target) {
    if (call == target->ordinal) run_child_session(sweep, settings, body, *target);
    // A call the child does not profile: it was measured in the parent.
    detail::log_debug("profiled under Nsight Compute: profile() call #" + std::to_string(call) +
                      " returns empty results; only call #" + std::to_string(target->ordinal) + " is profiled here");
    return Results{};
  }
  if (settings.backend == Backend::ncu) return profile_under_ncu(sweep, settings, call);
  return std::nullopt;
}

}  // namespace kscope::ncu

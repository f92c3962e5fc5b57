#include "backends/ncu/ncu_profile.hpp"

#include <atomic>
#include <iostream>

#include "backends/ncu/child_session.hpp"
#include "backends/ncu/child_target.hpp"
#include "backends/ncu/parent_session.hpp"
#include "kscope/errors.hpp"

namespace kscope::ncu {
namespace {

std::atomic<std::size_t> g_calls{0};

struct TargetState {
  std::optional<ChildTarget> target;
  std::string error;  // malformed variables, reported at the first profile() call
};

TargetState read_target() {
  try {
    return {child_target_from_environment(), ""};
  } catch (const Error& e) {
    return {std::nullopt, e.what()};
  }
}

// Read when the process starts, not at the first profile() call: whatever the program does to its
// environment later, a process that ncu started for kscope stays the child and never starts
// another ncu (which would re-run the program again, and again).
const TargetState g_target = read_target();

}  // namespace

std::optional<Results> route_profile(const Sweep& sweep, const Settings& settings, const Body& body) {
  const std::size_t ordinal = ++g_calls;
  if (!g_target.error.empty()) throw BackendError(g_target.error);
  if (const auto& target = g_target.target) {
    if (ordinal == target->ordinal) run_child_session(sweep, settings, body, *target);
    if (settings.verbosity == Verbosity::debug)
      std::cerr << "[kscope] profiled under Nsight Compute: profile() call #" << ordinal
                << " returns empty results; only call #" << target->ordinal << " is profiled here\n";
    return Results{};
  }
  if (settings.backend == Backend::ncu) return profile_under_ncu(sweep, settings, ordinal);
  return std::nullopt;
}

}  // namespace kscope::ncu

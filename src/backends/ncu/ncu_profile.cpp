#include "backends/ncu/ncu_profile.hpp"

#include <atomic>
#include <iostream>

#include "backends/ncu/child_session.hpp"
#include "backends/ncu/child_target.hpp"
#include "backends/ncu/parent_session.hpp"

namespace kscope::ncu {
namespace {

std::atomic<std::size_t> g_calls{0};

const std::optional<ChildTarget>& child_target() {
  static const std::optional<ChildTarget> target = child_target_from_environment();
  return target;
}

}  // namespace

std::optional<Results> route_profile(const Sweep& sweep, const Settings& settings, const Body& body) {
  const std::size_t ordinal = ++g_calls;
  if (const auto& target = child_target()) {
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

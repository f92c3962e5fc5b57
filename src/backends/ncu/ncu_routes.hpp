#pragma once
// Backend::ncu's route for profile() calls (BackendDefinition::route):
//  - In the child process that Backend::ncu starts under ncu ($KSCOPE_NCU_TARGET set): the calls
//    before the target return empty Results without running their body (they were measured in
//    the parent; under ncu the in-process backends could not work anyway, since ncu owns CUPTI).
//    The target call runs its body inside NVTX ranges, writes the manifest, and ends the process.
//  - In any other process, for Settings::backend == Backend::ncu: re-runs the program under ncu
//    and returns the report's measurements (parent_session.hpp).
//  - Otherwise nullopt: the call measures in this process.
// The call number (how many profile() calls this process made) ties the parent's call to the
// child's.
#include <cstddef>
#include <optional>

#include "kscope/profile.hpp"

namespace kscope::ncu {

std::optional<Results> route(const Sweep& sweep, const Settings& settings, const Body& body, std::size_t call);

}  // namespace kscope::ncu

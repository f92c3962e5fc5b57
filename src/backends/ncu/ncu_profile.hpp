#pragma once
// Backend::ncu's part of kscope::profile(), which calls route_profile() first, for every call:
//  - In the child process that Backend::ncu starts under ncu ($KSCOPE_NCU_TARGET set when the
//    process started): the
//    profile() calls before the target return empty Results without running their body (they
//    were measured in the parent; under ncu the in-process backends could not work anyway, since
//    ncu owns CUPTI). The target call runs its body inside NVTX ranges, writes the manifest, and
//    ends the process: it never returns.
//  - In any other process, for Settings::backend == Backend::ncu: re-runs the program under ncu
//    and returns the report's measurements (parent_session.hpp).
//  - Otherwise nullopt: profile() measures in this process.
// The ordinal (how many profile() calls this process made) ties the parent's call to the child's.
#include <optional>

#include "kscope/profile.hpp"

namespace kscope::ncu {

std::optional<Results> route_profile(const Sweep& sweep, const Settings& settings, const Body& body);

}  // namespace kscope::ncu

#pragma once
// The session in one line, as every readable view of a result opens (a profile's, an evaluation's,
// a race's, in C++, in Python and in the kscope command): what a reader needs to know the numbers
// below were measured alike.
#include <string>

#include "kscope/results.hpp"

namespace kscope::detail {

// "<GPU> | backend <backend> | cache_control <all|none> | clock_control <none|base>"; the GPU
// "GPU unknown" where the session did not name it. Made without C++ streams, which can crash in a
// process where torch is loaded (Python's views call it).
std::string session_headline(const SessionInfo& session);

// The headline, then the driver and the host where the session names them ("... | driver 580.65.06
// | host gpu-01"): where results of several machines meet (a comparison's two sides, a plot).
std::string session_headline_with_machine(const SessionInfo& session);

}  // namespace kscope::detail

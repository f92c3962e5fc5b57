#pragma once
// The profiled session inside the child process that ncu runs: the body runs under ChildBackend
// (NVTX ranges, no measurement), the manifest is written, and the process ends at once with
// std::_Exit after flushing C stdio. Ending there keeps the rest of the program (later profile()
// calls, output files, prints) from running twice; at-exit handlers and static destructors do not
// run in the child, and Python's own buffered output is not flushed.
#include "backends/ncu/child_target.hpp"
#include "kscope/profile.hpp"

namespace kscope::ncu {

[[noreturn]] void run_child_session(const Sweep& sweep, const Settings& settings, const Body& body,
                                    const ChildTarget& target);

}  // namespace kscope::ncu

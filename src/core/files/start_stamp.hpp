#pragma once
// When a session starts, as its facts and an output prefix's lock record it.
#include "kscope/results.hpp"

namespace kscope::detail {

// Records in `info` when the session starts and the host's load then (SessionInfo::started_at,
// load_avg).
void stamp_start(SessionInfo& info);

}  // namespace kscope::detail

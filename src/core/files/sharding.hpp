#pragma once
// What a profile() call takes from how it was launched, resolved once before the session starts.
#include "kscope/settings.hpp"

namespace kscope::detail {

// `settings` with Settings::shard resolved (unset: KSCOPE_SHARD, if set) and its output prefix
// final: an existing directory's name as that directory ("out" -> "out/"), then, for a shard of more
// than one, extended by the shard's file prefix. In a job Slurm started again (SLURM_RESTART_COUNT
// above 0), a sweep with an output prefix and neither resume nor overwrite set resumes (said at info).
Settings resolve_launch(const Settings& settings);

}  // namespace kscope::detail

#pragma once
// The shard a profile() call measures, resolved once before the session starts.
#include "kscope/settings.hpp"

namespace kscope::detail {

// `settings` with Settings::shard resolved (unset: KSCOPE_SHARD, if set) and its output prefix
// final: an existing directory's name as that directory ("out" -> "out/"), then, for a shard of more
// than one, extended by the shard's file prefix.
Settings resolve_shard(const Settings& settings);

}  // namespace kscope::detail

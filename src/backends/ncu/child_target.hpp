#pragma once
// How the parent tells the re-run program which profile() call to profile under ncu:
//   KSCOPE_NCU_TARGET=<ordinal>:<session key>   the n-th profile() call of the process (1-based),
//                                               whose sweep and settings must hash to the key
//   KSCOPE_NCU_MANIFEST=<path>                  where the child writes its manifest
// The ordinal finds the call; the key checks that the re-run makes the same call (a program whose
// sweep depends on time, randomness or input would otherwise be profiled with other configs).
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "kscope/settings.hpp"
#include "kscope/sweep.hpp"

namespace kscope::ncu {

struct ChildTarget {
  std::size_t ordinal = 0;
  std::string key;
  std::string manifest_path;
};

// nullopt in a process that ncu did not start for kscope. Throws BackendError when the variables
// are malformed.
std::optional<ChildTarget> child_target_from_environment();

// The "NAME=value" entries that make a child process this target.
std::vector<std::string> child_environment(const ChildTarget& target);

// The configs, and the settings that decide what the child runs, hashed (FNV-1a, 16 hex digits).
std::string session_key(const Sweep& sweep, const Settings& settings);

}  // namespace kscope::ncu

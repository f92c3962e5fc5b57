#pragma once
// The Settings fields as the engine's one table lists them (src/core/model/settings_table.cpp), for
// kscope's front ends: the Python module binds each field from it and hands the table to Python,
// whose tests check its options and the type stub against it. Public for those front ends, not for
// programs.
#include <cstddef>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "kscope/settings.hpp"

namespace kscope::detail {

// A field's member, which a front end binds as it is (Python: an attribute of _core.Settings):
// one alternative per type the fields have. std::monostate: a callable, which Python passes to
// profile() instead. A field of a new type adds its alternative here.
using SettingsMember =
    std::variant<std::monostate, std::size_t Settings::*, int Settings::*, double Settings::*, bool Settings::*,
                 std::string Settings::*, std::vector<std::string> Settings::*, Backend Settings::*,
                 ReplayMode Settings::*, CacheControl Settings::*, ClockControl Settings::*, Verbosity Settings::*,
                 Sampling Settings::*, AdaptiveSampling Settings::*, ThermalMode Settings::*,
                 ThrottledRuns Settings::*, InfoCollectorErrors Settings::*, BoundThresholds Settings::*,
                 std::optional<Shard> Settings::*>;

struct SettingsFieldInfo {
  std::string name;         // the C++ member
  std::string python_name;  // analyze.kernel's keyword; empty where Python has none
  std::string python_type;  // of the bound attribute; empty where Python passes it to profile()
  std::string role;         // "measurement", "summary" or "session"
  std::string doc;
  SettingsMember member;
};

std::vector<SettingsFieldInfo> settings_field_infos();

// What each entry of the engine (profile, tune, evaluate: src/core/engine/entry.cpp) takes of the fields,
// by their Python names: those it refuses, with why, and those it sets itself.
struct EntryOptionsInfo {
  std::string entry;
  std::vector<std::pair<std::string, std::string>> refused;  // {python name, why}
  std::vector<std::string> fixed;
};

std::vector<EntryOptionsInfo> entry_options_infos();

}  // namespace kscope::detail

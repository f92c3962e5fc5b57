#pragma once
// The Settings fields as the engine's one table lists them (src/core/settings_fields.cpp), for
// kscope's front ends: the Python module hands them to Python, whose tests check its options, the
// bindings and the type stub against them. Public for those front ends, not for programs.
#include <string>
#include <vector>

namespace kscope::detail {

struct SettingsFieldInfo {
  std::string name;         // the C++ member
  std::string python_name;  // analyze.kernel's keyword; empty where Python has none
  std::string python_type;  // in the _core stub; empty where Python passes it to profile()
  std::string role;         // "measurement", "summary" or "session"
  std::string doc;
};

std::vector<SettingsFieldInfo> settings_field_infos();

}  // namespace kscope::detail

#pragma once
// The Settings fields, listed once (core/model/settings_table.cpp): each one's name in C++ and in
// Python, its Python type, what it is for and its role. Resume (core/engine/sample_stream.cpp) and merge
// (core/engine/merge.cpp) compare the fields that decide how a sweep was measured; the results file
// saves the fields that have a saved form; messages name a field as its caller spells it
// (core/model/caller_language.hpp); Settings::validate runs each field's own check; Python binds each
// field from the list and reads it (_core.settings_fields()), and its tests check the options and
// the type stub against it.
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "core/model/json_fields.hpp"
#include "kscope/detail/enum_names.hpp"
#include "kscope/detail/settings_fields.hpp"
#include "kscope/settings.hpp"

namespace kscope::detail {

enum class SettingsRole {
  // How the samples were measured (the sweep's identity): a resumed sweep and the shards of a
  // merge must agree on it.
  measurement,
  // How the samples are summarized: a resume summarizes every sample anew with the value given
  // now, so it may change there; the shards of a merge, summarized once, must agree on it.
  summary,
  // How the session runs (what it prints, where it writes, its thermal guard): free to differ.
  session,
};

std::string to_string(SettingsRole role);  // "measurement", "summary", "session"
std::span<const EnumName<SettingsRole>> enum_names(SettingsRole);

// How a field is stored: its JSON form and its member.
struct SettingsStorage {
  // key: the C++ name, also the key in results.json and manifest.json; write: the value as saved
  // and compared (a callable: whether it is set); read: empty where it cannot be read back.
  json_fields::Field<Settings> json;
  SettingsMember member;  // what front ends bind (std::monostate: a callable)
};

struct SettingsField {
  using Test = bool (*)(const Settings&);
  using Check = void (*)(const Settings&);
  SettingsField(SettingsStorage storage, std::string python_name, std::string python_type, SettingsRole role,
                bool saved, std::string doc, Test in_use = nullptr, Check check = nullptr)
      : json(std::move(storage.json)), member(storage.member), python_name(std::move(python_name)),
        python_type(std::move(python_type)), role(role), saved(saved), doc(std::move(doc)), in_use(in_use),
        check(check) {}

  json_fields::Field<Settings> json;
  SettingsMember member;
  std::string python_name;  // analyze.kernel's keyword; empty where Python has none
  std::string python_type;  // of the bound Python attribute; empty where Python passes it to profile()
  SettingsRole role;
  bool saved;  // in results.json
  std::string doc;
  // Whether the field shapes a sweep with these settings (empty: always). One that does not is
  // compared as null, so a resume or merge never tells apart values that changed nothing.
  Test in_use;
  // Throws ConfigError naming the fix for a bad value of this field alone (Settings::validate runs
  // every field's, then its checks across fields).
  Check check;
};

const std::vector<SettingsField>& settings_fields();
// The field named so in C++; nullptr for another name.
const SettingsField* find_settings_field(const std::string& name);

// The fields of these roles, as an object {name: value} (null where not in use).
nlohmann::ordered_json settings_json(const Settings& settings, std::initializer_list<SettingsRole> roles);
// "runs: 10 and 20" (the field as its caller spells it) for every saved field of these roles that
// differs between `a` and `b`: what the settings of two Results can tell, since Results keep no
// callable (in memory as loaded from a file).
std::vector<std::string> settings_differences(const Settings& a, const Settings& b,
                                              std::initializer_list<SettingsRole> roles);

}  // namespace kscope::detail

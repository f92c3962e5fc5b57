#include "core/model/caller_language.hpp"

#include <atomic>

#include "core/model/settings_table.hpp"

namespace kscope::detail {
namespace {

std::atomic<Caller> g_caller{Caller::cpp};

}  // namespace

void set_caller(Caller caller) { g_caller.store(caller); }

Caller caller() { return g_caller.load(); }

std::string option(const std::string& settings_field) {
  // The command line reads results files, whose fields are the plain names: those, as Python spells them.
  if (caller() == Caller::cpp) return "Settings::" + settings_field;
  // Nested fields ("adaptive.min_runs") are keys of the Python option's dict.
  if (const auto dot = settings_field.find('.'); dot != std::string::npos)
    return settings_field.substr(0, dot) + "['" + settings_field.substr(dot + 1) + "']";
  const SettingsField* field = find_settings_field(settings_field);
  return field && !field->python_name.empty() ? field->python_name : settings_field;
}

std::string spell(const std::string& cpp, const std::string& python) {
  return caller() == Caller::cpp ? cpp : python;
}

std::string spell(const std::string& cpp, const std::string& python, const std::string& command_line) {
  return caller() == Caller::command_line ? command_line : spell(cpp, python);
}

}  // namespace kscope::detail

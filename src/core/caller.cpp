#include "core/caller.hpp"

#include <atomic>
#include <map>

namespace kscope::detail {
namespace {

std::atomic<Caller> g_caller{Caller::cpp};

// Settings fields whose kscope.analyze.kernel keyword has another name.
const std::map<std::string, std::string> kPythonKeywords{
    {"thermal_wait_c", "thermal_wait"},
    {"thermal_cont_c", "thermal_cont"},
    {"thermal_timeout_s", "thermal_timeout"},
    {"sampling", "adaptive"},
    {"energy_window_s", "energy_window"},
};

}  // namespace

void set_caller(Caller caller) { g_caller.store(caller); }

Caller caller() { return g_caller.load(); }

std::string option(const std::string& settings_field) {
  // The command line reads results files, whose fields are the plain names: those, as Python spells them.
  if (caller() == Caller::cpp) return "Settings::" + settings_field;
  // Nested fields ("adaptive.min_runs") are keys of the Python option's dict.
  if (const auto dot = settings_field.find('.'); dot != std::string::npos)
    return settings_field.substr(0, dot) + "['" + settings_field.substr(dot + 1) + "']";
  const auto renamed = kPythonKeywords.find(settings_field);
  return renamed == kPythonKeywords.end() ? settings_field : renamed->second;
}

std::string spell(const std::string& cpp, const std::string& python) {
  return caller() == Caller::cpp ? cpp : python;
}

}  // namespace kscope::detail

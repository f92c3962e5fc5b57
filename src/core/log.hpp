#pragma once
// kscope's one logger. Messages go to stderr as "[kscope] ...", or to a sink that a front end
// installs (the Python package). What is printed follows the verbosity of the session in progress
// (Settings::verbosity): quiet prints nothing, info prints warnings and information, debug also
// details. Outside a session the level is info.
#include <functional>
#include <string>

#include "kscope/settings.hpp"

namespace kscope::detail {

enum class LogLevel { debug, info, warning };

void log(LogLevel level, const std::string& message);
inline void log_debug(const std::string& message) { log(LogLevel::debug, message); }
inline void log_info(const std::string& message) { log(LogLevel::info, message); }
inline void log_warning(const std::string& message) { log(LogLevel::warning, message); }
bool log_enabled(LogLevel level);

// The verbosity of one session, for its lifetime (scopes nest: the outer level comes back).
class LogScope {
 public:
  explicit LogScope(Verbosity verbosity);
  ~LogScope();
  LogScope(const LogScope&) = delete;
  LogScope& operator=(const LogScope&) = delete;

 private:
  Verbosity previous_;
};

// Receives every message the verbosity lets through, already prefixed; empty restores stderr.
using LogSink = std::function<void(LogLevel, const std::string&)>;
void set_log_sink(LogSink sink);

}  // namespace kscope::detail

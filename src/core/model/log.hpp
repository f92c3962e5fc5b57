#pragma once
// kscope's one logger. Messages go to stderr as "[kscope] ...", or to the sink a front end installs
// (the Python package: warnings through Python's warnings module, the rest through sys.stderr).
// What is printed follows the verbosity of the session in progress (Settings::verbosity): quiet
// prints nothing, info prints warnings and information, debug also details. Outside a session the
// level is info. A sink receives every warning whatever the verbosity (the front end has its own
// filters) and the other messages the verbosity lets through.
#include <iosfwd>
#include <memory>
#include <string>

#include "kscope/detail/log_sink.hpp"  // LogLevel, WarningKind, the front ends' LogSink
#include "kscope/settings.hpp"

namespace kscope::detail {

// A sink may throw from warning() (Python's -W error turns a warning into an exception there):
// the exception then leaves log_warning.
void log(LogLevel level, const std::string& message);
inline void log_debug(const std::string& message) { log(LogLevel::debug, message); }
inline void log_info(const std::string& message) { log(LogLevel::info, message); }
void log_warning(const std::string& message, WarningKind kind = WarningKind::setup);
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

// The console that progress is written to: the sink's, or std::cerr. One stream per thread, whose
// text reaches the sink at each flush.
std::ostream& console();
bool console_is_terminal();

}  // namespace kscope::detail

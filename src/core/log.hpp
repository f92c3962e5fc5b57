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

#include "kscope/settings.hpp"

namespace kscope::detail {

enum class LogLevel { debug, info, warning };

// What a warning is about, for front ends that sort warnings (Python's categories).
enum class WarningKind {
  setup,  // how a call is set up or what happens to its files and results (Python: a UserWarning)
  run,    // something that happened while measuring: a failure recorded as missing (a RuntimeWarning)
};

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

// Where a front end wants kscope's output. Called from whichever thread logs, without kscope's
// locks held.
class LogSink {
 public:
  virtual ~LogSink() = default;
  virtual void warning(WarningKind kind, const std::string& message) = 0;
  // An info or debug line, "[kscope] " prefixed, without the newline.
  virtual void line(LogLevel level, const std::string& text) = 0;
  // Console text as is: the progress display's lines and in-place redraws.
  virtual void write(const std::string& text) = 0;
  virtual bool is_terminal() = 0;
};
// Installs `sink` for every message from now on; nullptr restores stderr.
void set_log_sink(std::shared_ptr<LogSink> sink);

// The console that progress is written to: the sink's, or std::cerr. One stream per thread, whose
// text reaches the sink at each flush.
std::ostream& console();
bool console_is_terminal();

}  // namespace kscope::detail

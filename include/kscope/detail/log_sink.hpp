#pragma once
// Where kscope's messages go, for kscope's front ends: the Python module installs a sink that routes
// warnings to Python's warnings module and the rest to sys.stderr. Without one, stderr.
#include <memory>
#include <string>

namespace kscope::detail {

enum class LogLevel { debug, info, warning };

// What a warning is about, for front ends that sort warnings (Python's categories).
enum class WarningKind {
  setup,  // how a call is set up or what happens to its files and results (Python: a UserWarning)
  run,    // something that happened while measuring: a failure recorded as missing (a RuntimeWarning)
};

// Where a front end wants kscope's output. Called from whichever thread logs, without kscope's
// locks held. A sink receives every warning whatever the verbosity (the front end has its own
// filters) and the other messages the verbosity lets through; it may throw from warning()
// (Python's -W error), and the exception then leaves the code that warned.
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

}  // namespace kscope::detail

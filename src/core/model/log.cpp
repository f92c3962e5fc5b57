#include "core/model/log.hpp"

#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <iostream>
#include <mutex>
#include <sstream>

namespace kscope::detail {
namespace {

std::atomic<Verbosity> g_verbosity{Verbosity::info};
std::mutex g_sink_mutex;
std::shared_ptr<LogSink> g_sink;

constexpr const char* kPrefix = "[kscope] ";

std::shared_ptr<LogSink> sink() {
  std::lock_guard lock(g_sink_mutex);
  return g_sink;
}

// Collects what is written between flushes and hands it to the sink, or to std::cerr.
class ConsoleBuffer : public std::stringbuf {
 protected:
  int sync() override {
    const std::string text = str();
    str({});
    if (text.empty()) return 0;
    if (const auto s = sink()) {
      s->write(text);
    } else {
      std::cerr << text << std::flush;
    }
    return 0;
  }
};

}  // namespace

bool log_enabled(LogLevel level) {
  switch (g_verbosity.load()) {
    case Verbosity::quiet: return false;
    case Verbosity::info: return level != LogLevel::debug;
    case Verbosity::debug: return true;
  }
  return true;
}

// Sinks are called without the lock: a sink may take other locks (Python's GIL) that a logging
// thread holds.
void log(LogLevel level, const std::string& message) {
  if (level == LogLevel::warning) return log_warning(message);
  if (!log_enabled(level)) return;
  if (const auto s = sink()) return s->line(level, kPrefix + message);
  std::cerr << kPrefix << message << '\n' << std::flush;
}

void log_warning(const std::string& message, WarningKind kind) {
  if (const auto s = sink()) return s->warning(kind, message);
  if (!log_enabled(LogLevel::warning)) return;
  std::cerr << kPrefix << "warning: " << message << '\n' << std::flush;
}

LogScope::LogScope(Verbosity verbosity) : previous_(g_verbosity.exchange(verbosity)) {}

LogScope::~LogScope() { g_verbosity.store(previous_); }

void set_log_sink(std::shared_ptr<LogSink> sink) {
  std::lock_guard lock(g_sink_mutex);
  g_sink = std::move(sink);
}

std::ostream& console() {
  thread_local ConsoleBuffer buffer;
  thread_local std::ostream stream(&buffer);
  return stream;
}

bool console_is_terminal() {
  if (const auto s = sink()) return s->is_terminal();
  return isatty(fileno(stderr)) != 0;
}

}  // namespace kscope::detail

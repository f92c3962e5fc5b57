#include "core/log.hpp"

#include <atomic>
#include <iostream>
#include <mutex>

namespace kscope::detail {
namespace {

std::atomic<Verbosity> g_verbosity{Verbosity::info};
std::mutex g_sink_mutex;
LogSink g_sink;

}  // namespace

bool log_enabled(LogLevel level) {
  switch (g_verbosity.load()) {
    case Verbosity::quiet: return false;
    case Verbosity::info: return level != LogLevel::debug;
    case Verbosity::debug: return true;
  }
  return true;
}

void log(LogLevel level, const std::string& message) {
  if (!log_enabled(level)) return;
  const std::string line = std::string("[kscope] ") + (level == LogLevel::warning ? "warning: " : "") + message;
  LogSink sink;
  {
    std::lock_guard lock(g_sink_mutex);
    sink = g_sink;
  }
  // Called without the lock: a sink may take other locks (Python's GIL) that a logging thread holds.
  if (sink) return sink(level, line);
  std::cerr << line << '\n' << std::flush;
}

LogScope::LogScope(Verbosity verbosity) : previous_(g_verbosity.exchange(verbosity)) {}

LogScope::~LogScope() { g_verbosity.store(previous_); }

void set_log_sink(LogSink sink) {
  std::lock_guard lock(g_sink_mutex);
  g_sink = std::move(sink);
}

}  // namespace kscope::detail

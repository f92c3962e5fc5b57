#pragma once
// Helpers shared by the CPU tests: quiet settings, the message of an expected error, a file's text,
// a scratch directory, environment variables set for a scope, and checks run in a child process.
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <exception>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "kscope/errors.hpp"
#include "kscope/settings.hpp"

namespace kscope_test {

// A short sweep that prints nothing: `runs` runs after one warm-up run.
inline kscope::Settings quiet(std::size_t runs = 3) {
  kscope::Settings s;
  s.runs = runs;
  s.warmup_runs = 1;
  s.verbosity = kscope::Verbosity::quiet;
  return s;
}

// A quiet sweep of 2 runs per config streamed under `prefix` (Settings::output_prefix).
inline kscope::Settings streamed(const std::string& prefix) {
  kscope::Settings s = quiet(2);
  s.output_prefix = prefix;
  return s;
}

// The message of the `Expected` exception `f` throws; a text saying none came otherwise.
template <typename Expected = kscope::ConfigError, typename F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const Expected& e) {
    return e.what();
  }
  return "(no expected exception)";
}

// The whole text of a file; empty when it cannot be read.
inline std::string text_of(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// A fresh directory under /tmp, removed with everything in it at the end of the scope.
class TempDir {
 public:
  TempDir() {
    char pattern[] = "/tmp/kscope_test_XXXXXX";
    path_ = mkdtemp(pattern);
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  // A path (or file prefix) inside it.
  std::string prefix(const std::string& name = "sweep_") const { return (std::filesystem::path(path_) / name).string(); }

 private:
  std::string path_;
};

// Sets (or, for nullopt, unsets) environment variables for a scope, and restores them after it.
class ScopedEnv {
 public:
  using Variables = std::vector<std::pair<std::string, std::optional<std::string>>>;
  explicit ScopedEnv(const Variables& variables) {
    for (const auto& [name, value] : variables) {
      const char* old = std::getenv(name.c_str());
      saved_.emplace_back(name, old ? std::optional<std::string>(old) : std::nullopt);
      set(name, value);
    }
  }
  ScopedEnv(const std::string& name, const std::optional<std::string>& value) : ScopedEnv(Variables{{name, value}}) {}
  ~ScopedEnv() {
    // Backwards, so that a name given twice gets back its value from before the first.
    for (auto it = saved_.rbegin(); it != saved_.rend(); ++it) set(it->first, it->second);
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  static void set(const std::string& name, const std::optional<std::string>& value) {
    if (value) setenv(name.c_str(), value->c_str(), 1);
    else unsetenv(name.c_str());
  }
  Variables saved_;
};

// What `checks` found wrong (empty: nothing), run in a child process: what it registers (a format,
// a statistic) stays out of the other tests of this program.
inline std::string in_child(const std::function<std::string()>& checks) {
  int pipe_fds[2];
  if (::pipe(pipe_fds) != 0) return "pipe() failed";
  const pid_t child = fork();
  if (child == 0) {
    ::close(pipe_fds[0]);
    std::string problems;
    try {
      problems = checks();
    } catch (const std::exception& e) {
      problems = std::string("threw: ") + e.what();
    }
    const ssize_t written = ::write(pipe_fds[1], problems.data(), problems.size());
    _exit(written == static_cast<ssize_t>(problems.size()) ? 0 : 1);
  }
  ::close(pipe_fds[1]);
  std::string problems;
  char block[4096];
  for (ssize_t n; (n = ::read(pipe_fds[0], block, sizeof block)) > 0;) problems.append(block, static_cast<std::size_t>(n));
  ::close(pipe_fds[0]);
  int status = 0;
  ::waitpid(child, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) problems += "\n(the child process failed)";
  return problems;
}


}  // namespace kscope_test

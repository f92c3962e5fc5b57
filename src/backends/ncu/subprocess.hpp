#pragma once
// Child processes for the ncu backend and the doctor. They are started with posix_spawn (no fork
// of a process that may hold CUDA state and many threads), read stdin from /dev/null (a re-run
// program must not eat the parent's input), and are never left behind: the destructor terminates
// and reaps a child that was not waited for.
#include <sys/types.h>

#include <string>
#include <vector>

namespace kscope::ncu {

struct SpawnOptions {
  // "NAME=value" entries added to this process's environment (replacing a variable of that name).
  std::vector<std::string> environment;
  // stdout and stderr go to this file (created or truncated); empty: to a pipe, see read_output().
  std::string output_path;
};

class Subprocess {
 public:
  // argv[0] is the program's path. Throws BackendError when it cannot be started.
  Subprocess(const std::vector<std::string>& argv, const SpawnOptions& options);
  ~Subprocess();
  Subprocess(const Subprocess&) = delete;
  Subprocess& operator=(const Subprocess&) = delete;

  // Everything the child writes until it closes its output (empty when output goes to a file).
  std::string read_output();
  // The exit status, or 128 + the signal number for a child killed by a signal (as shells say).
  int wait();

 private:
  pid_t pid_ = -1;
  int output_fd_ = -1;
  bool reaped_ = false;
  int exit_code_ = 0;
};

struct CapturedRun {
  int exit_code = 0;
  std::string output;  // stdout and stderr, interleaved as written
};

// Runs argv to completion and returns what it printed.
CapturedRun run_captured(const std::vector<std::string>& argv);

// "a b 'c d'": a command line as a shell would accept it, for messages.
std::string shell_quoted(const std::vector<std::string>& argv);

}  // namespace kscope::ncu

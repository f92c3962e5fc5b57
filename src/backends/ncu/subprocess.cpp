#include "backends/ncu/subprocess.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

#include "kscope/errors.hpp"

extern char** environ;

namespace kscope::ncu {
namespace {

// posix_spawn's file actions, destroyed on every path.
class FileActions {
 public:
  FileActions() { posix_spawn_file_actions_init(&actions_); }
  ~FileActions() { posix_spawn_file_actions_destroy(&actions_); }
  FileActions(const FileActions&) = delete;
  FileActions& operator=(const FileActions&) = delete;
  posix_spawn_file_actions_t* get() { return &actions_; }

 private:
  posix_spawn_file_actions_t actions_;
};

// This process's environment with `extra` added, later entries replacing earlier ones by name.
std::vector<std::string> child_environment(const std::vector<std::string>& extra) {
  std::vector<std::string> env;
  const auto name_of = [](const std::string& entry) { return entry.substr(0, entry.find('=')); };
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    const std::string entry(*e);
    bool replaced = false;
    for (const auto& x : extra) replaced = replaced || name_of(x) == name_of(entry);
    if (!replaced) env.push_back(entry);
  }
  env.insert(env.end(), extra.begin(), extra.end());
  return env;
}

std::vector<char*> c_strings(std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (auto& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

int exit_code_of(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return -1;
}

}  // namespace

Subprocess::Subprocess(const std::vector<std::string>& argv, const SpawnOptions& options) {
  if (argv.empty()) throw InternalError("Subprocess: empty command line (kscope bug)");
  FileActions actions;
  posix_spawn_file_actions_addopen(actions.get(), 0, "/dev/null", O_RDONLY, 0);
  int pipe_fds[2] = {-1, -1};
  if (options.output_path.empty()) {
    if (pipe2(pipe_fds, O_CLOEXEC) != 0)
      throw BackendError(std::string("could not create a pipe to run ") + argv[0] + ": " + std::strerror(errno));
    posix_spawn_file_actions_adddup2(actions.get(), pipe_fds[1], 1);
  } else {
    posix_spawn_file_actions_addopen(actions.get(), 1, options.output_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                     0644);
  }
  posix_spawn_file_actions_adddup2(actions.get(), 1, 2);

  std::vector<std::string> args = argv;
  std::vector<std::string> env = child_environment(options.environment);
  std::vector<char*> c_args = c_strings(args);
  std::vector<char*> c_env = c_strings(env);
  const int rc = posix_spawn(&pid_, argv[0].c_str(), actions.get(), nullptr, c_args.data(), c_env.data());
  if (pipe_fds[1] >= 0) close(pipe_fds[1]);
  if (rc != 0) {
    if (pipe_fds[0] >= 0) close(pipe_fds[0]);
    pid_ = -1;
    throw BackendError("could not start " + shell_quoted(argv) + ": " + std::strerror(rc));
  }
  output_fd_ = pipe_fds[0];
}

Subprocess::~Subprocess() {
  if (output_fd_ >= 0) close(output_fd_);
  if (pid_ < 0 || reaped_) return;
  // Not waited for (an exception on the way): ask it to stop, then insist.
  kill(pid_, SIGTERM);
  int status = 0;
  for (int i = 0; i < 50; ++i) {
    if (waitpid(pid_, &status, WNOHANG) == pid_) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  kill(pid_, SIGKILL);
  while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
}

std::string Subprocess::read_output() {
  std::string out;
  if (output_fd_ < 0) return out;
  char buffer[4096];
  for (;;) {
    const ssize_t n = read(output_fd_, buffer, sizeof buffer);
    if (n > 0) {
      out.append(buffer, static_cast<std::size_t>(n));
    } else if (n == 0 || errno != EINTR) {
      break;
    }
  }
  close(output_fd_);
  output_fd_ = -1;
  return out;
}

int Subprocess::wait() {
  if (reaped_) return exit_code_;
  int status = 0;
  while (waitpid(pid_, &status, 0) < 0) {
    if (errno != EINTR) throw BackendError(std::string("waitpid failed: ") + std::strerror(errno));
  }
  reaped_ = true;
  exit_code_ = exit_code_of(status);
  return exit_code_;
}

CapturedRun run_captured(const std::vector<std::string>& argv) {
  Subprocess child(argv, {});
  CapturedRun run;
  run.output = child.read_output();
  run.exit_code = child.wait();
  return run;
}

std::string shell_quoted(const std::vector<std::string>& argv) {
  std::string out;
  for (const auto& a : argv) {
    const bool plain = !a.empty() && a.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                                         "0123456789_-./=:,@+%") == std::string::npos;
    std::string quoted = a;
    if (!plain) {
      quoted = "'";
      for (char c : a) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
      quoted += "'";
    }
    out += (out.empty() ? "" : " ") + quoted;
  }
  return out;
}

}  // namespace kscope::ncu

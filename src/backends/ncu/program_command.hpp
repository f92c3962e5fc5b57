#pragma once
// The command line of this process, to re-run it under ncu (ncu 2025.3.1 cannot attach to a
// running process). A C++ program is re-run as /proc/self/exe with its arguments; a Python script
// likewise, as the interpreter with its arguments ("python3 script.py args"). An interactive
// interpreter, `python3 -c`, or a Jupyter kernel has no program to re-run.
#include <string>
#include <vector>

namespace kscope::ncu {

struct ProgramCommand {
  std::string executable;              // as invoked (see invoked_executable), else /proc/self/exe
  std::vector<std::string> arguments;  // argv[1..] from /proc/self/cmdline

  std::vector<std::string> command_line() const;  // executable, then the arguments
};

// The path this process was started by, when argv[0] (found through `path_env` if it has no '/')
// is the same file as `exe`; otherwise `exe`. A virtual environment's python3 is a symlink to
// the system interpreter: re-run by its resolved path, Python leaves the venv and its packages.
std::string invoked_executable(const std::string& argv0, const std::string& exe, const std::string& path_env);

// Throws BackendError when /proc/self cannot be read.
ProgramCommand current_program();

// Why `program` cannot be re-run to reproduce this session, e.g. "an interactive Python
// interpreter (python3 without a script)"; empty when it can.
std::string rerun_problem(const ProgramCommand& program);

}  // namespace kscope::ncu

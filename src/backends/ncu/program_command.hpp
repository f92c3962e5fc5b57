#pragma once
// The command line of this process, to re-run it under ncu (ncu 2025.3.1 cannot attach to a
// running process). A C++ program is re-run as /proc/self/exe with its arguments; a Python script
// likewise, as the interpreter with its arguments ("python3 script.py args"). An interactive
// interpreter, `python3 -c`, or a Jupyter kernel has no program to re-run.
#include <string>
#include <vector>

namespace kscope::ncu {

struct ProgramCommand {
  std::string executable;              // /proc/self/exe, resolved
  std::vector<std::string> arguments;  // argv[1..] from /proc/self/cmdline

  std::vector<std::string> command_line() const;  // executable, then the arguments
};

// Throws BackendError when /proc/self cannot be read.
ProgramCommand current_program();

// Why `program` cannot be re-run to reproduce this session, e.g. "an interactive Python
// interpreter (python3 without a script)"; empty when it can.
std::string rerun_problem(const ProgramCommand& program);

}  // namespace kscope::ncu

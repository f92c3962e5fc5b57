#pragma once
// What the kscope program's commands share: their command lines parsed by CLI11, with kscope's
// messages and exit codes, and the check that their output reached its destination.
#include <CLI/CLI.hpp>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace kscope::cli {

constexpr int kUsageError = 64;   // EX_USAGE: a bad command line
constexpr int kOutputError = 74;  // EX_IOERR: the output could not be written (a full disk, a closed pipe)

// Parses `args` (those after the command's name) into `app`. Returns the exit status when the
// command ends here: 0 after --help or --version (printed on `out`), 64 after a bad command line
// ("<app name>: <what is wrong>" and `usage` on `err`); nullopt when the command goes on. `--` ends
// the options: what follows is positional, even when it starts with '-'.
std::optional<int> parse(CLI::App& app, const std::vector<std::string>& args, std::ostream& out, std::ostream& err,
                         const std::string& usage);

// `status`, once everything written to stdout is flushed; 74 (saying why on stderr) when it could
// not be written, so that `kscope ... > /dev/full` fails as any Unix tool does.
int flushed(int status);

}  // namespace kscope::cli

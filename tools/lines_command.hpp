#pragma once
// `kscope lines FILE [--top N]`: a saved line sampling's listing; `kscope lines BASELINE CANDIDATE`:
// each line's share in both.
#include <iosfwd>
#include <string>
#include <vector>

// Runs the command on its arguments (those after `kscope lines`), printing to `out`, errors to
// `err`. Returns the exit status: 0 printed, 2 a file that cannot be read, 64 on bad usage.
int lines_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

#pragma once
// `kscope compare BASELINE.json CANDIDATE.json`: the comparison of two saved results, as a CI gate.
#include <iosfwd>
#include <string>
#include <vector>

// Runs the command on its arguments (those after `kscope compare`), printing the table to `out`
// and errors to `err`; verdicts are coloured when `terminal` is true and NO_COLOR is unset or
// empty. Returns the exit status: 0 when no row is slower, 1 when a row is slower, 2 when the
// inputs cannot be compared, 64 on bad usage.
int compare_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err, bool terminal);

#pragma once
// The metrics command, shared by `kscope metrics` and `kscope-metrics`.
#include <string>
#include <vector>

// Runs the command on its arguments (without the program name); `program` names it in usage and
// error messages. Returns the exit status: 0, 1 (the metric database refused), 64 (bad usage).
int metrics_command(const std::string& program, const std::vector<std::string>& args);

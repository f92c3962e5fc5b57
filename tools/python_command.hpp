#pragma once
// Commands of the kscope program that are the Python package's (`kscope evaluate`:
// kscope.evaluate_many): run as `python -m kscope COMMAND ARGS...`.
#include <string>
#include <vector>

// Replaces this process with `python -m kscope <command> <args>`: the interpreter KSCOPE_PYTHON names,
// else the one this build's Python package was built for; the package found beside this program
// (pip's layout, kscope/bin/kscope) or in this build's tree, else where that interpreter finds it.
// Returns only when the interpreter cannot be started: 1, having said why on stderr.
int python_command(const std::string& command, const std::vector<std::string>& args);

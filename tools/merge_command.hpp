#pragma once
// `kscope merge OUT_PREFIX INPUT...`: the shards of one sweep as one result, written under OUT_PREFIX.
#include <iosfwd>
#include <string>
#include <vector>

// Runs the command on its arguments (those after `kscope merge`), printing the merged table to
// `out` and warnings and errors to `err`. Returns the exit status: 0 when merged, 2 when the inputs
// cannot be merged, 64 on bad usage.
int merge_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

#pragma once
// Files a front end of kscope writes itself, as kscope writes its own (base/files.hpp says how:
// through symbolic links, never over a device or a directory, the old file whole on failure).
#include <string>
#include <vector>

#include "kscope/settings.hpp"

namespace kscope::detail {

// Replaces the file at `path` with `text` (the Python module's CSV files).
void write_whole(const std::string& path, const std::string& text);

// An output prefix that names an existing directory stands for that directory ("out" -> "out/"):
// its files go inside it, not beside it as "outsummary.csv". Any other prefix is returned as it is
// (kscope merge's --output).
std::string directory_as_prefix(const std::string& prefix);

// Before a profiled call whose front end writes `companions` beside the files of its output prefix
// (Python's output_csv), when some of them exist: makes room for them all under the prefix the
// call's settings resolve to (its shard's), as the sweep's own claim does (a finished call's files
// moved aside together, one info line; an unfinished sweep or another kind of result refused with
// ConfigError; a link refused with FileError).
void make_room_for_call(const Settings& settings, const std::vector<std::string>& companions);

}  // namespace kscope::detail

#pragma once
// Files a front end of kscope writes itself, as kscope writes its own (base/files.hpp says how:
// through symbolic links, never over a device or a directory, the old file whole on failure).
#include <string>

namespace kscope::detail {

// Replaces the file at `path` with `text` (the Python module's CSV files).
void write_whole(const std::string& path, const std::string& text);

// An output prefix that names an existing directory stands for that directory ("out" -> "out/"):
// its files go inside it, not beside it as "outsummary.csv". Any other prefix is returned as it is
// (kscope merge's --output).
std::string directory_as_prefix(const std::string& prefix);

}  // namespace kscope::detail

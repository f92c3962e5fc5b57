#pragma once
// How kscope reads and writes the files a caller names (results, tables, a sweep's files).
//
// Writing replaces a file whole, and only a file:
//   - a symbolic link is followed (through every link) and its target is written; the link stays;
//   - the target must be a regular file or not exist yet: a directory, a device (/dev/null), a FIFO
//     or a socket is refused with a FileError, as replacing it is never what the caller meant;
//   - the text goes to a new file beside the target, is flushed to disk and renamed over it, so a
//     crash, a kill or a full disk leaves the previous file as it was, never half of each; an
//     existing file keeps its permission bits.
// Every failure is a FileError naming the path and the operating system's reason.
#include <fstream>
#include <functional>
#include <ostream>
#include <string>

#include "kscope/detail/files.hpp"  // write_whole of a text, directory_as_prefix

namespace kscope::detail {

// The file a write to `path` replaces: `path` itself, or the final target of the symbolic link(s)
// there. Throws FileError when that is neither a regular file nor missing.
std::string write_target(const std::string& path);

void write_whole(const std::string& path, const std::function<void(std::ostream&)>& write);

// `path` opened for reading. Throws FileError when it is missing, a directory or unreadable;
// `expected` says what the caller should give instead ("a file written by ProfileResults.save").
std::ifstream open_for_reading(const std::string& path, const std::string& expected);

}  // namespace kscope::detail

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
//
// Reading takes a regular file, or a pipe read once (a shell's process substitution, <(cat a.json);
// a FIFO): the path is opened without blocking and checked with fstat, so a device or a socket is
// refused with a FileError instead of reading forever, and a FIFO that nothing writes to reads as
// empty instead of waiting for a writer.
#include <cstdint>
#include <functional>
#include <istream>
#include <memory>
#include <optional>
#include <ostream>
#include <string>

#include "kscope/detail/files.hpp"  // write_whole of a text, directory_as_prefix

namespace kscope::detail {

// The file a write to `path` replaces: `path` itself, or the final target of the symbolic link(s)
// there. Throws FileError when that is neither a regular file nor missing.
std::string write_target(const std::string& path);

void write_whole(const std::string& path, const std::function<void(std::ostream&)>& write);

// What is at `path` (links followed): "a regular file", "a directory", "a character device", "a
// FIFO (named pipe)"...; empty when nothing is.
std::string kind_of_file(const std::string& path);

// Whether `path` (not followed if a link) still names the file open as `fd`: a path in a directory
// others may write to can be replaced by anything between two calls, and what kscope removes must
// be what it made.
bool names_open_file(const std::string& path, int fd);

// A regular file or a pipe opened for reading, read through stream(). Throws FileError when `path`
// is missing, a directory, a device, a socket or unreadable; `expected` says what the caller should
// give instead ("a file written by ProfileResults.save"). A read error later throws FileError too.
class InputFile {
 public:
  InputFile(const std::string& path, const std::string& expected);
  // nullopt when nothing is at `path` (the other refusals as above).
  static std::optional<InputFile> if_exists(const std::string& path, const std::string& expected);
  ~InputFile();
  InputFile(InputFile&&) noexcept;
  InputFile& operator=(InputFile&&) noexcept;

  std::istream& stream();
  std::uint64_t size() const;  // when it was opened (a pipe: 0)

 private:
  struct Open;
  explicit InputFile(std::unique_ptr<Open> open);
  std::unique_ptr<Open> open_;
};

// The whole text of the file `in` reads, refused (FileError naming `path`) when the file is larger
// than `limit` bytes: `what` says what that text is ("a results file").
std::string read_whole(InputFile& in, const std::string& path, std::uint64_t limit, const std::string& what);

// The text of the file at `path`, read to say what it holds (in a message, a lock's holder); empty
// when it cannot be read or holds more than `limit` bytes.
std::string text_if_readable(const std::string& path, std::uint64_t limit);

// The most a JSON document kscope reads whole (a results file, a manifest) may hold: a quarter of
// this machine's memory, as the parsed document takes several times its text's size.
std::uint64_t json_document_limit();

}  // namespace kscope::detail

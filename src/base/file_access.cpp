#include "base/file_access.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <memory>
#include <optional>
#include <system_error>
#include <utility>

#include "kscope/errors.hpp"

namespace kscope::detail {
namespace {

constexpr int kMaxLinks = 40;  // as the kernel's limit on a path's links (ELOOP)

std::error_code os_code(int error) { return {error, std::generic_category()}; }

std::string directory_of(const std::string& path) {
  const std::string directory = std::filesystem::path(path).parent_path().string();
  return directory.empty() ? "." : directory;
}

// "'out.json'", or "'out.json' (a link to 'data/out.json')".
std::string named(const std::string& path, const std::string& target) {
  return "'" + path + "'" + (target == path ? "" : " (a link to '" + target + "')");
}

[[noreturn]] void cannot_write(const std::string& path, const std::string& target, int error) {
  std::string why = std::strerror(error);
  if (error == ENOENT) why = "its directory '" + directory_of(target) + "' does not exist; create it, or give a path in an existing directory";
  if (error == EACCES || error == EPERM || error == EROFS)
    why += " (in its directory '" + directory_of(target) + "'); give a path in a writable directory";
  throw FileError("cannot write " + named(path, target) + ": " + why, path, os_code(error));
}

std::string read_link(const std::string& link) {
  std::error_code error;
  const std::filesystem::path to = std::filesystem::read_symlink(link, error);
  if (error) throw FileError("cannot follow the link '" + link + "': " + error.message(), link, error);
  return to.is_absolute() ? to.string() : (std::filesystem::path(directory_of(link)) / to).string();
}

const char* kind_of(mode_t mode) {
  if (S_ISREG(mode)) return "a regular file";
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

// An output stream's bytes written to a file descriptor: the descriptor created is the one written,
// whatever its path names meanwhile. A failed write leaves the stream bad and its errno in error().
class DescriptorWriter final : public std::streambuf {
 public:
  explicit DescriptorWriter(int fd) : fd_(fd) { setp(buffer_, buffer_ + sizeof buffer_); }
  int error() const { return error_; }

 protected:
  int_type overflow(int_type c) override {
    if (!flush()) return traits_type::eof();
    if (!traits_type::eq_int_type(c, traits_type::eof())) sputc(traits_type::to_char_type(c));
    return traits_type::not_eof(c);
  }
  int sync() override { return flush() ? 0 : -1; }

 private:
  bool flush() {
    for (const char* next = pbase(); next < pptr();) {
      const ssize_t n = ::write(fd_, next, static_cast<std::size_t>(pptr() - next));
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) {
        error_ = errno;
        return false;
      }
      next += n;
    }
    setp(buffer_, buffer_ + sizeof buffer_);
    return true;
  }
  int fd_;
  int error_ = 0;
  char buffer_[1 << 16];
};

// The temporary file beside the target, created by this process (O_EXCL: never a link or a file
// someone else put there): removed unless renamed over the target, and only while its name is still
// this file's.
class Temporary {
 public:
  Temporary(const std::string& path, const std::string& target) {
    static std::atomic<unsigned> serial{0};
    while (fd_ < 0) {
      path_ = target + ".tmp-" + std::to_string(::getpid()) + "-" + std::to_string(serial++);
      fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);  // 0666 less the umask
      if (fd_ < 0 && errno != EEXIST) cannot_write(path, target, errno);
    }
  }
  ~Temporary() {
    if (!renamed_ && names_open_file(path_, fd_)) ::unlink(path_.c_str());
    ::close(fd_);
  }
  Temporary(const Temporary&) = delete;
  Temporary& operator=(const Temporary&) = delete;

  const std::string& path() const { return path_; }
  int fd() const { return fd_; }
  void renamed() { renamed_ = true; }

 private:
  std::string path_;
  int fd_ = -1;
  bool renamed_ = false;
};

[[noreturn]] void cannot_read(const std::string& path, const std::string& why, int error) {
  throw FileError("cannot read '" + path + "': " + why, path, error ? os_code(error) : std::error_code());
}

// An input stream's bytes read from a file descriptor; a read error throws FileError.
class DescriptorReader final : public std::streambuf {
 public:
  DescriptorReader(int fd, std::string path) : fd_(fd), path_(std::move(path)) {}

 protected:
  int_type underflow() override {
    ssize_t n = 0;
    do n = ::read(fd_, buffer_, sizeof buffer_);
    while (n < 0 && errno == EINTR);
    if (n < 0) cannot_read(path_, std::strerror(errno), errno);
    if (n == 0) return traits_type::eof();
    setg(buffer_, buffer_, buffer_ + n);
    return traits_type::to_int_type(buffer_[0]);
  }

 private:
  int fd_;
  std::string path_;
  char buffer_[1 << 16];
};

// Why a file of this mode is not read; empty for a regular file or a pipe (read once: opened without
// blocking, one that nothing writes to ends at once).
std::string not_readable(mode_t mode, const std::string& expected) {
  if (S_ISREG(mode) || S_ISFIFO(mode)) return "";
  if (S_ISDIR(mode)) return "it is a directory; give " + expected;
  return std::string("it is ") + kind_of(mode) +
         ", not a regular file: kscope reads files and pipes, not devices (a device may read without end); give " +
         expected;
}

}  // namespace

std::string kind_of_file(const std::string& path) {
  struct stat status {};
  return ::stat(path.c_str(), &status) == 0 ? kind_of(status.st_mode) : "";
}

bool names_open_file(const std::string& path, int fd) {
  struct stat named {}, open {};
  return ::lstat(path.c_str(), &named) == 0 && ::fstat(fd, &open) == 0 && named.st_ino == open.st_ino &&
         named.st_dev == open.st_dev;
}

std::string write_target(const std::string& path) {
  std::string target = path;
  for (int links = 0;; ++links) {
    struct stat status {};
    if (::lstat(target.c_str(), &status) != 0) {
      if (errno == ENOENT) return target;  // a new file: its directory is checked as it is created
      cannot_write(path, target, errno);
    }
    if (S_ISREG(status.st_mode)) return target;
    if (S_ISLNK(status.st_mode)) {
      if (links == kMaxLinks) cannot_write(path, target, ELOOP);
      target = read_link(target);
      continue;
    }
    if (S_ISDIR(status.st_mode))
      throw FileError("cannot write " + named(path, target) + ": it is a directory; give the path of a file",
                      path, os_code(EISDIR));
    throw FileError("cannot write " + named(path, target) + ": it is " + kind_of(status.st_mode) +
                        ", not a regular file, and kscope writes a file whole (beside it, then renamed over it), "
                        "which would replace it; give the path of a regular file",
                    path);
  }
}

void write_whole(const std::string& path, const std::function<void(std::ostream&)>& write) {
  const std::string target = write_target(path);
  struct stat existing {};
  const bool exists = ::stat(target.c_str(), &existing) == 0;
  Temporary temporary(path, target);
  if (exists) ::fchmod(temporary.fd(), existing.st_mode & 07777);  // best effort: the file keeps its mode
  {
    DescriptorWriter buffer(temporary.fd());
    std::ostream out(&buffer);
    write(out);
    out.flush();
    if (!out) {
      const int error = buffer.error() ? buffer.error() : EIO;
      throw FileError("writing " + named(path, target) + " failed: " + std::strerror(error) +
                          (exists ? " (the file is as it was before)" : ""),
                      path, os_code(error));
    }
  }
  if (::fsync(temporary.fd()) != 0) {
    const int error = errno;
    throw FileError("writing " + named(path, target) + " failed: " + std::strerror(error), path, os_code(error));
  }
  if (::rename(temporary.path().c_str(), target.c_str()) != 0) cannot_write(path, target, errno);
  temporary.renamed();
  // The rename on disk too; best effort: some file systems cannot sync a directory.
  if (const int directory = ::open(directory_of(target).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC); directory >= 0) {
    ::fsync(directory);
    ::close(directory);
  }
}

void write_whole(const std::string& path, const std::string& text) {
  write_whole(path, [&](std::ostream& out) { out << text; });
}

std::string directory_as_prefix(const std::string& prefix) {
  struct stat status {};
  if (prefix.empty() || prefix.back() == '/' || ::stat(prefix.c_str(), &status) != 0 || !S_ISDIR(status.st_mode))
    return prefix;
  return prefix + "/";
}

struct InputFile::Open {
  Open(int descriptor, std::uint64_t bytes, const std::string& path)
      : fd(descriptor), size(bytes), reader(descriptor, path), stream(&reader) {
    stream.exceptions(std::ios::badbit);  // a read error reaches the caller as the FileError it is
  }
  ~Open() { ::close(fd); }
  int fd;
  std::uint64_t size;
  DescriptorReader reader;
  std::istream stream;
};

std::optional<InputFile> InputFile::if_exists(const std::string& path, const std::string& expected) {
  struct stat status {};
  // Checked before opening, so that no device is ever opened, and again on what was opened.
  if (::stat(path.c_str(), &status) != 0) {
    if (errno == ENOENT) return std::nullopt;
    cannot_read(path, std::strerror(errno), errno);
  }
  if (const std::string why = not_readable(status.st_mode, expected); !why.empty())
    cannot_read(path, why, S_ISDIR(status.st_mode) ? EISDIR : 0);
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return std::nullopt;
    cannot_read(path, std::strerror(errno), errno);
  }
  auto open = std::make_unique<Open>(fd, 0, path);
  if (::fstat(fd, &status) != 0) cannot_read(path, std::strerror(errno), errno);
  if (const std::string why = not_readable(status.st_mode, expected); !why.empty())
    cannot_read(path, why, S_ISDIR(status.st_mode) ? EISDIR : 0);
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  open->size = static_cast<std::uint64_t>(status.st_size);
  return InputFile(std::move(open));
}

InputFile::InputFile(const std::string& path, const std::string& expected) {
  auto file = if_exists(path, expected);
  if (!file) cannot_read(path, "no such file; give " + expected, ENOENT);
  open_ = std::move(file->open_);
}

InputFile::InputFile(std::unique_ptr<Open> open) : open_(std::move(open)) {}
InputFile::~InputFile() = default;
InputFile::InputFile(InputFile&&) noexcept = default;
InputFile& InputFile::operator=(InputFile&&) noexcept = default;

std::istream& InputFile::stream() { return open_->stream; }
std::uint64_t InputFile::size() const { return open_->size; }

std::string read_whole(InputFile& in, const std::string& path, std::uint64_t limit, const std::string& what) {
  if (in.size() > limit)
    throw FileError("cannot read '" + path + "' as " + what + ": it holds " + std::to_string(in.size()) +
                        " bytes, more than kscope reads whole (at most " + std::to_string(limit) +
                        " bytes on this machine)",
                    path, os_code(EFBIG));
  std::string text;
  text.reserve(static_cast<std::size_t>(in.size()));
  char buffer[1 << 16];
  while (in.stream().read(buffer, sizeof buffer) || in.stream().gcount() > 0) {
    text.append(buffer, static_cast<std::size_t>(in.stream().gcount()));
    if (text.size() > limit)  // grown since it was opened, or a pipe
      throw FileError("cannot read '" + path + "' as " + what + ": it holds more than " + std::to_string(limit) +
                          " bytes, more than kscope reads whole on this machine",
                      path, os_code(EFBIG));
  }
  return text;
}

std::string text_if_readable(const std::string& path, std::uint64_t limit) {
  try {
    auto in = InputFile::if_exists(path, "a file");
    return in ? read_whole(*in, path, limit, "a file") : std::string();
  } catch (const FileError&) {
    return {};
  }
}

std::uint64_t json_document_limit() {
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page <= 0) return std::uint64_t(1) << 32;
  return static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(page) / 4;
}

}  // namespace kscope::detail

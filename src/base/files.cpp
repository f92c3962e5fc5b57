#include "base/files.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <system_error>

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
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

// The temporary file beside the target: removed unless renamed over it.
class Temporary {
 public:
  Temporary(const std::string& path, const std::string& target) {
    static std::atomic<unsigned> serial{0};
    while (fd_ < 0) {
      path_ = target + ".tmp-" + std::to_string(::getpid()) + "-" + std::to_string(serial++);
      fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);  // 0666 less the umask
      if (fd_ < 0 && errno != EEXIST) cannot_write(path, target, errno);
    }
  }
  ~Temporary() {
    ::close(fd_);
    if (!renamed_) ::unlink(path_.c_str());
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

}  // namespace

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
    std::ofstream out(temporary.path(), std::ios::binary | std::ios::trunc);
    if (!out) cannot_write(path, target, errno ? errno : EIO);
    write(out);
    out.flush();
    if (!out) {
      const int error = errno ? errno : EIO;
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

std::ifstream open_for_reading(const std::string& path, const std::string& expected) {
  struct stat status {};
  if (::stat(path.c_str(), &status) != 0) {
    const int error = errno;
    throw FileError("cannot read '" + path + "': " + (error == ENOENT ? "no such file" : std::strerror(error)) +
                        "; give " + expected,
                    path, os_code(error));
  }
  if (S_ISDIR(status.st_mode))
    throw FileError("cannot read '" + path + "': it is a directory; give " + expected, path, os_code(EISDIR));
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    const int error = errno ? errno : EIO;
    throw FileError("cannot read '" + path + "': " + std::strerror(error), path, os_code(error));
  }
  return in;
}

}  // namespace kscope::detail

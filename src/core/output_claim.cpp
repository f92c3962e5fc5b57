#include "core/output_claim.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <system_error>

#include "base/file_access.hpp"
#include "base/json_text.hpp"
#include "base/text.hpp"
#include "core/caller_language.hpp"
#include "core/log.hpp"
#include "core/output_formats.hpp"
#include "core/start_stamp.hpp"
#include "kscope/errors.hpp"

namespace kscope::detail {
namespace {

// What a sweep writes under its prefix: the stream's files, every output format's (Backend::ncu: its
// report too).
std::vector<std::string> sweep_file_names() {
  std::vector<std::string> names = {kManifestFile, kProgressFile, kSamplesFile};
  for (std::string& file : result_files())
    if (file != kSamplesFile) names.push_back(std::move(file));
  names.emplace_back("ncu_report.ncu-rep");
  return names;
}

// Longer than any header of samples.csv.
constexpr std::uint64_t kMaxHeaderBytes = 1 << 20;
// Longer than any lock record: the holder's PID, host and start time.
constexpr std::uint64_t kMaxLockRecordBytes = 1 << 12;

bool exists(const std::string& path) {
  struct stat status {};
  return ::lstat(path.c_str(), &status) == 0;
}

// A file read to say what it holds, in a message: empty when it cannot be read, or holds more
// than `limit` bytes.
std::string read_text(const std::string& path, std::uint64_t limit) {
  try {
    auto in = InputFile::if_exists(path, "a file");
    return in ? read_whole(*in, path, limit, "a file") : std::string();
  } catch (const FileError&) {
    return {};
  }
}

// Whether a sweep's file records nothing: an empty progress.jsonl, a samples.csv of one line at most.
bool records_nothing(const std::string& path, const std::string& file) {
  struct stat status {};
  if (::stat(path.c_str(), &status) != 0 || !S_ISREG(status.st_mode)) return false;
  if (file == kProgressFile) return status.st_size == 0;
  if (file != kSamplesFile || static_cast<std::uint64_t>(status.st_size) > kMaxHeaderBytes) return false;
  const std::string text = read_text(path, kMaxHeaderBytes);
  const auto lines = std::count(text.begin(), text.end(), '\n');
  return static_cast<std::size_t>(status.st_size) == text.size() &&
         (lines == 0 || (lines == 1 && text.back() == '\n'));
}

std::string this_host() {
  char name[256] = {};
  return ::gethostname(name, sizeof name - 1) == 0 ? name : "unknown";
}

// The line breaks of a file, read a block at a time; 0 when it cannot be read.
std::size_t lines_of(const std::string& path) {
  try {
    auto in = InputFile::if_exists(path, "a file");
    std::size_t lines = 0;
    char block[1 << 16];
    while (in && (in->stream().read(block, sizeof block) || in->stream().gcount() > 0))
      lines += static_cast<std::size_t>(std::count(block, block + in->stream().gcount(), '\n'));
    return lines;
  } catch (const FileError&) {
    return 0;
  }
}

// "a finished sweep", or "an unfinished sweep (3 of 8 configs measured: ...)", from its files. A
// failed sweep writes its partial results too: only the progress against the manifest tells.
std::string earlier_sweep(const std::string& prefix) {
  if (!exists(prefix + kManifestFile))
    return exists(prefix + kResultsFile) ? "a sweep's results" : "an earlier sweep's files";
  try {
    const auto manifest = parse_json(read_text(prefix + kManifestFile, json_document_limit()));
    const std::size_t done = lines_of(prefix + kProgressFile);
    const auto configs = manifest.is_object() ? manifest.find("configs") : manifest.end();
    if (configs == manifest.end() || !configs->is_array()) return "an earlier sweep's files";
    if (done >= configs->size()) return "a finished sweep";
    return "an unfinished sweep (" + std::to_string(done) + " of " + std::to_string(configs->size()) +
           " configs measured: killed, interrupted or failed)";
  } catch (const JsonTextError&) {
    return "an earlier sweep's files";
  }
}

std::string set_true(const std::string& field) { return option(field) + spell(" = true", "=True"); }

// The overwrite option as the writer's caller names it.
std::string overwrite_option(PrefixWriter writer) {
  if (writer == PrefixWriter::sweep) return set_true("overwrite");
  return caller() == Caller::command_line ? "--overwrite" : spell("write_merged's overwrite = true", "overwrite=True");
}

// Refuses to go on where the prefix holds a sweep this writer would replace without being asked to.
void check_earlier_sweep(const Settings& settings, PrefixWriter writer) {
  if (settings.overwrite) return;
  const std::string& prefix = settings.output_prefix;
  std::string found;
  for (const auto& file : sweep_files(prefix)) found += (found.empty() ? "" : ", ") + file;
  if (found.empty()) return;
  const std::string named = prefix_option(writer) + " '" + prefix + "'";
  const bool measured_here = exists(prefix + kManifestFile);
  if (writer == PrefixWriter::merge) {
    if (settings.resume && !measured_here) return;  // the earlier merge of the sweep resumed now
    throw ConfigError(named + " holds " + earlier_sweep(prefix) + " (" + found +
                      "), which kscope does not replace unasked: the merged results would take the place of its "
                      "files. Give " + overwrite_option(writer) + " to replace " +
                      (measured_here ? "that sweep (its manifest and progress go too)" : "them") + ", or another " +
                      prefix_option(writer));
  }
  if (!settings.resume)
    throw ConfigError(named + " holds " + earlier_sweep(prefix) + " (" + found +
                      "), which kscope does not replace unasked. Set " + set_true("resume") +
                      " to continue it (a finished sweep returns its results without measuring again), " +
                      set_true("overwrite") + " to replace it, or give another " + option("output_prefix"));
  if (!measured_here)
    throw ConfigError("cannot resume under " + named + ": it holds " + found +
                      " but no " + kManifestFile + ", so nothing there can be continued. Set " + set_true("overwrite") +
                      " (instead of " + option("resume") + ") to replace those files, or give another " +
                      option("output_prefix"));
}

std::string holder_of(const std::string& lock_path) {
  try {
    const auto holder = parse_json(read_text(lock_path, kMaxLockRecordBytes));
    const auto text = [&](const char* key) { return cut(printable(holder.at(key).get<std::string>()), 60); };
    return "process " + std::to_string(holder.at("pid").get<long>()) + " on host " + text("host") + " (since " +
           text("since") + ")";
  } catch (const std::exception&) {  // a JsonTextError, or a record of other members
    return "another process";  // it has the lock and has not written its name yet
  }
}

[[noreturn]] void not_a_lock(const std::string& lock_path, const char* what) {
  throw FileError("cannot use '" + lock_path + "' as the lock of " + option("output_prefix") + ": it is " + what +
                      ", not a lock file kscope made. kscope never writes through such a path (it would write "
                      "into, then remove, what it names): remove it, or give another " + option("output_prefix"),
                  lock_path, std::error_code(EEXIST, std::generic_category()));
}

[[noreturn]] void lock_failed(const std::string& lock_path, const char* what, int error) {
  throw FileError("cannot " + std::string(what) + " the lock file '" + lock_path + "' of " + option("output_prefix") +
                      ": " + std::strerror(error),
                  lock_path, std::error_code(error, std::generic_category()));
}

}  // namespace

std::string prefix_option(PrefixWriter writer) {
  if (writer == PrefixWriter::sweep) return option("output_prefix");
  return caller() == Caller::command_line ? "OUT_PREFIX" : spell("the output prefix of write_merged", "output_prefix");
}

std::vector<std::string> sweep_files(const std::string& prefix) {
  std::vector<std::string> found;
  for (const std::string& file : sweep_file_names())
    if (exists(prefix + file) && !records_nothing(prefix + file, file)) found.push_back(prefix + file);
  return found;
}

OutputClaim::OutputClaim(const Settings& settings, PrefixWriter writer) : lock_path_(settings.output_prefix + "lock") {
  // The lock file may be removed by the holder between our open and our lock: then the lock we got
  // is on a file nobody else will open, and we try again on the path's new file.
  while (true) {
    // Never through a link, never blocking on a FIFO (O_NOFOLLOW, O_NONBLOCK); what was opened is
    // checked to be a file of this one name.
    fd_ = ::open(lock_path_.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0644);
    if (fd_ < 0 && errno == ELOOP) not_a_lock(lock_path_, "a symbolic link");
    if (fd_ < 0) lock_failed(lock_path_, "create", errno);
    struct stat held {};
    if (::fstat(fd_, &held) != 0) lock_failed(lock_path_, "inspect", errno);
    if (!S_ISREG(held.st_mode) || held.st_nlink != 1) {
      ::close(fd_);
      fd_ = -1;
      not_a_lock(lock_path_, S_ISREG(held.st_mode) ? "a file with other names (a hard link)" : "not a regular file");
    }
    if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
      const int error = errno;
      ::close(fd_);
      fd_ = -1;
      if (error == EWOULDBLOCK)
        throw ConfigError(prefix_option(writer) + " '" + settings.output_prefix + "' is in use: " +
                          holder_of(lock_path_) + " is writing a sweep there (it holds '" + lock_path_ + "'), and " +
                          (writer == PrefixWriter::sweep
                               ? "two sweeps under one prefix would mix their samples. Wait for it to finish, or give "
                                 "this sweep another " + option("output_prefix") +
                                     " (every process, and every shard, needs its own)"
                               : "merged results written there now would be replaced by its own. Wait for it to "
                                 "finish, or give another " + prefix_option(writer)));
      if (error == ENOLCK || error == EOPNOTSUPP || error == ENOSYS) {
        log_warning("the file system of '" + lock_path_ + "' does not support locks (" + std::strerror(error) +
                    "): nothing stops another process from writing under the same " + prefix_option(writer));
        break;
      }
      lock_failed(lock_path_, "lock", error);
    }
    if (names_open_file(lock_path_, fd_)) break;
    ::close(fd_);
    fd_ = -1;
  }
  if (fd_ >= 0) {
    SessionInfo now;
    stamp_start(now);
    const std::string holder =
        nlohmann::json{{"pid", static_cast<long>(::getpid())}, {"host", this_host()}, {"since", now.started_at}}.dump() +
        "\n";
    // The name only serves the message of a process refused while this one holds the lock.
    const bool named = ::ftruncate(fd_, 0) == 0 &&
                       ::pwrite(fd_, holder.data(), holder.size(), 0) == static_cast<ssize_t>(holder.size());
    if (!named) log_debug("could not write this process's name into '" + lock_path_ + "': " + std::strerror(errno));
  }
  try {
    check_earlier_sweep(settings, writer);
  } catch (...) {
    release();
    throw;
  }
}

OutputClaim::~OutputClaim() { release(); }

void OutputClaim::release() noexcept {
  if (fd_ < 0) return;
  // While still holding the lock (see the constructor), and only the file this claim locked.
  if (names_open_file(lock_path_, fd_)) ::unlink(lock_path_.c_str());
  ::close(fd_);
  fd_ = -1;
}

}  // namespace kscope::detail

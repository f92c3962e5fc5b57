#include "core/output_claim.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <system_error>

#include "core/caller.hpp"
#include "core/log.hpp"
#include "core/session.hpp"
#include "kscope/errors.hpp"

namespace kscope::detail {
namespace {

// What a sweep writes under its prefix (Backend::ncu: its report too).
const char* const kSweepFiles[] = {"manifest.json", "progress.jsonl", "samples.csv", "summary.csv", "results.json",
                                   "ncu_report.ncu-rep"};

bool exists(const std::string& path) {
  struct stat status {};
  return ::lstat(path.c_str(), &status) == 0;
}

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string this_host() {
  char name[256] = {};
  return ::gethostname(name, sizeof name - 1) == 0 ? name : "unknown";
}

// "a finished sweep", or "an unfinished sweep (3 of 8 configs measured: ...)", from its files. A
// failed sweep writes its partial results too: only the progress against the manifest tells.
std::string earlier_sweep(const std::string& prefix) {
  if (!exists(prefix + "manifest.json"))
    return exists(prefix + "results.json") ? "a sweep's results" : "an earlier sweep's files";
  try {
    const auto manifest = nlohmann::json::parse(read_text(prefix + "manifest.json"));
    const std::string progress = read_text(prefix + "progress.jsonl");
    const auto done = static_cast<std::size_t>(std::count(progress.begin(), progress.end(), '\n'));
    const std::size_t total = manifest.value("configs", nlohmann::json::array()).size();
    if (done >= total) return "a finished sweep";
    return "an unfinished sweep (" + std::to_string(done) + " of " + std::to_string(total) +
           " configs measured: killed, interrupted or failed)";
  } catch (const nlohmann::json::exception&) {
    return "an earlier sweep's files";
  }
}

std::string set_true(const std::string& field) { return option(field) + spell(" = true", "=True"); }

// Refuses to go on where the prefix holds a sweep this one would replace without being asked to.
void check_earlier_sweep(const Settings& settings) {
  if (settings.overwrite) return;
  const std::string& prefix = settings.output_prefix;
  std::string found;
  for (const auto& file : sweep_files(prefix)) found += (found.empty() ? "" : ", ") + file;
  if (found.empty()) return;
  const std::string named = option("output_prefix") + " '" + prefix + "'";
  if (!settings.resume)
    throw ConfigError(named + " holds " + earlier_sweep(prefix) + " (" + found +
                      "), which kscope does not replace unasked. Set " + set_true("resume") +
                      " to continue it (a finished sweep returns its results without measuring again), " +
                      set_true("overwrite") + " to replace it, or give another " + option("output_prefix"));
  if (!exists(prefix + "manifest.json"))
    throw ConfigError("cannot resume under " + named + ": it holds " + found +
                      " but no manifest.json, so nothing there can be continued. Set " + set_true("overwrite") +
                      " (instead of " + option("resume") + ") to replace those files, or give another " +
                      option("output_prefix"));
}

std::string holder_of(const std::string& lock_path) {
  try {
    const auto holder = nlohmann::json::parse(read_text(lock_path));
    return "process " + std::to_string(holder.at("pid").get<long>()) + " on host " +
           holder.at("host").get<std::string>() + " (since " + holder.at("since").get<std::string>() + ")";
  } catch (const nlohmann::json::exception&) {
    return "another process";  // it has the lock and has not written its name yet
  }
}

[[noreturn]] void lock_failed(const std::string& lock_path, const char* what, int error) {
  throw FileError("cannot " + std::string(what) + " the lock file '" + lock_path + "' of " + option("output_prefix") +
                      ": " + std::strerror(error),
                  lock_path, std::error_code(error, std::generic_category()));
}

}  // namespace

std::vector<std::string> sweep_files(const std::string& prefix) {
  std::vector<std::string> found;
  for (const char* file : kSweepFiles)
    if (exists(prefix + file)) found.push_back(prefix + file);
  return found;
}

OutputClaim::OutputClaim(const Settings& settings) : lock_path_(settings.output_prefix + "lock") {
  // The lock file may be removed by the holder between our open and our lock: then the lock we got
  // is on a file nobody else will open, and we try again on the path's new file.
  while (true) {
    fd_ = ::open(lock_path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd_ < 0) lock_failed(lock_path_, "create", errno);
    if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
      const int error = errno;
      ::close(fd_);
      fd_ = -1;
      if (error == EWOULDBLOCK)
        throw ConfigError(option("output_prefix") + " '" + settings.output_prefix + "' is in use: " +
                          holder_of(lock_path_) + " is writing a sweep there (it holds '" + lock_path_ +
                          "'), and two sweeps under one prefix would mix their samples. Wait for it to finish, or "
                          "give this sweep another " + option("output_prefix") +
                          " (every process, and every shard, needs its own)");
      if (error == ENOLCK || error == EOPNOTSUPP || error == ENOSYS) {
        log_warning("the file system of '" + lock_path_ + "' does not support locks (" + std::strerror(error) +
                    "): nothing stops another process from writing under the same " + option("output_prefix"));
        break;
      }
      lock_failed(lock_path_, "lock", error);
    }
    struct stat held {}, named {};
    if (::fstat(fd_, &held) == 0 && ::stat(lock_path_.c_str(), &named) == 0 && held.st_ino == named.st_ino &&
        held.st_dev == named.st_dev)
      break;
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
    check_earlier_sweep(settings);
  } catch (...) {
    release();
    throw;
  }
}

OutputClaim::~OutputClaim() { release(); }

void OutputClaim::release() noexcept {
  if (fd_ < 0) return;
  ::unlink(lock_path_.c_str());  // while still holding the lock: see the constructor
  ::close(fd_);
  fd_ = -1;
}

}  // namespace kscope::detail

#include "core/files/output_claim.hpp"

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
#include "core/model/caller_language.hpp"
#include "core/model/log.hpp"
#include "core/files/output_formats.hpp"
#include "core/files/sharding.hpp"
#include "core/files/start_stamp.hpp"
#include "kscope/detail/files.hpp"
#include "kscope/errors.hpp"

namespace kscope::detail {
namespace {

// Longer than any lock record: the holder's PID, host, start time and kind of result.
constexpr std::uint64_t kMaxLockRecordBytes = 1 << 12;

bool exists(const std::string& path) {
  struct stat status {};
  return ::lstat(path.c_str(), &status) == 0;
}

std::string this_host() {
  char name[256] = {};
  return ::gethostname(name, sizeof name - 1) == 0 ? name : "unknown";
}

std::string set_true(const std::string& field) { return option(field) + spell(" = true", "=True"); }

// The overwrite option as the writer's caller names it.
std::string overwrite_option(ResultKind writer) {
  if (writer != ResultKind::merge) return set_true("overwrite");
  return caller() == Caller::command_line ? "--overwrite" : spell("write_merged's overwrite = true", "overwrite=True");
}

// "a, b, c": the first files of a prefix, "and 4 more" of a race's many.
std::string joined(const std::vector<std::string>& items) {
  constexpr std::size_t kShown = 6;
  std::string out;
  for (std::size_t i = 0; i < items.size() && i < kShown; ++i) out += (out.empty() ? "" : ", ") + items[i];
  if (items.size() > kShown) out += " and " + std::to_string(items.size() - kShown) + " more";
  return out;
}

// What the refused call can do instead with an unfinished result of its own kind.
std::string unfinished_choices(ResultKind writer) {
  const std::string other = "give another " + prefix_option(writer);
  if (writer == ResultKind::evaluation)
    return "Set " + overwrite_option(writer) + " to replace it (an evaluation is not continued: it is evaluated again), "
           "or " + other;
  return "Set " + set_true("resume") + " to continue it" +
         (writer == ResultKind::race ? " (the runs on disk take the same decisions again)" : "") + ", " +
         overwrite_option(writer) + " to replace it, or " + other;
}

// What the files of a finished result moved aside leave to the caller: the options that keep them in place.
std::string instead_of_backup(ResultKind writer) {
  const bool resumes = writer == ResultKind::sweep || writer == ResultKind::race;
  return overwrite_option(writer) + " replaces it instead" +
         (resumes ? ", " + set_true("resume") + " returns its results without measuring" : std::string());
}

// Makes room under the prefix for the writer (the lock held), or refuses: see the header.
void make_room(const Settings& settings, ResultKind writer, const std::vector<std::string>& companions) {
  const std::string& prefix = settings.output_prefix;
  for (const std::string& file : companions) check_prefix_file(file);
  const PrefixContents held = prefix_contents(prefix);
  std::vector<std::string> files = held.files;
  for (const std::string& file : companions)
    if (exists(file)) files.push_back(file);
  if (files.empty()) return;
  using State = PrefixContents::State;
  const std::string named = prefix_option(writer) + " '" + prefix + "'";
  const std::string other = "give another " + prefix_option(writer);
  if (held.state == State::empty) {  // the companions of an earlier call alone
    if (settings.overwrite || settings.resume) return;
    const unsigned n = back_up(prefix, files);
    log_info("moved the earlier files beside '" + prefix + "' aside (" + joined(files) + "): they end in '.~" +
             std::to_string(n) + "~' now (" + overwrite_option(writer) + " replaces them instead)");
    return;
  }
  const std::string holds = named + " holds " + held.description + " (" + joined(files) + ")";
  if (held.state != State::unknown && held.kind != writer)
    throw ConfigError(holds + ", not the files of " + with_article(writer) + ": kscope never continues, replaces or " +
                      "moves another kind of result's files. Give this " + to_string(writer) + " another " +
                      prefix_option(writer) + ", or move those files away");
  if (held.state == State::unknown) {
    if (settings.overwrite) return;
    if (settings.resume && writer != ResultKind::merge)
      throw ConfigError("cannot resume under " + named + ": it holds " + held.description + " (" + joined(files) +
                        "), so nothing there can be continued. Set " + set_true("overwrite") + " (instead of " +
                        option("resume") + ") to replace those files, or " + other);
    throw ConfigError(holds + ", which kscope does not replace unasked. Give " + overwrite_option(writer) +
                      " to replace them, or " + other);
  }
  if (settings.overwrite) {
    if (writer == ResultKind::race) {  // its rounds, which the new race may not all write again
      log_info("replacing " + held.description + " under '" + prefix + "' (" + option("overwrite") + ")");
      remove_files(files, "of the race being replaced");
    }
    return;
  }
  if (settings.resume) return;  // a sweep or race continued; a resumed sweep's merge replaces its earlier one
  if (held.state == State::unfinished) throw ConfigError(holds + ", which kscope does not replace unasked. " +
                                                         unfinished_choices(writer));
  const unsigned n = back_up(prefix, files);
  log_info("moved " + held.description + " under '" + prefix + "' aside: its " + std::to_string(files.size()) +
           (files.size() == 1 ? " file ends" : " files end") + " in '.~" + std::to_string(n) + "~' now (" +
           instead_of_backup(writer) + ")");
}

// "process 12 on host gpu1 (since ...) is writing a sweep"
std::string holder_of(const std::string& lock_path) {
  try {
    const auto holder = parse_json(text_if_readable(lock_path, kMaxLockRecordBytes));
    const auto text = [&](const char* key) { return cut(printable(holder.at(key).get<std::string>()), 60); };
    return "process " + std::to_string(holder.at("pid").get<long>()) + " on host " + text("host") + " (since " +
           text("since") + ") is writing " + (holder.contains("kind") ? text("kind") : std::string("a sweep"));
  } catch (const std::exception&) {  // a JsonTextError, or a record of other members
    return "another process is writing";  // it has the lock and has not written its name yet
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

std::string prefix_option(ResultKind writer) {
  if (writer != ResultKind::merge) return option("output_prefix");
  return caller() == Caller::command_line ? "OUT_PREFIX" : spell("the output prefix of write_merged", "output_prefix");
}

OutputClaim::OutputClaim(const Settings& settings, ResultKind writer, const std::vector<std::string>& companions)
    : lock_path_(settings.output_prefix + "lock") {
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
                          holder_of(lock_path_) + " there (it holds '" + lock_path_ + "'), and " +
                          (writer != ResultKind::merge
                               ? "two processes writing under one prefix would mix their files. Wait for it to finish, "
                                 "or give this " + to_string(writer) + " another " + option("output_prefix") +
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
        nlohmann::json{{"pid", static_cast<long>(::getpid())}, {"host", this_host()}, {"since", now.started_at},
                       {"kind", with_article(writer)}}.dump() +
        "\n";
    // The name only serves the message of a process refused while this one holds the lock.
    const bool named = ::ftruncate(fd_, 0) == 0 &&
                       ::pwrite(fd_, holder.data(), holder.size(), 0) == static_cast<ssize_t>(holder.size());
    if (!named) log_debug("could not write this process's name into '" + lock_path_ + "': " + std::strerror(errno));
  }
  try {
    make_room(settings, writer, companions);
  } catch (...) {
    release();
    throw;
  }
}

OutputClaim::~OutputClaim() { release(); }

void make_room_for_call(const Settings& settings, const std::vector<std::string>& companions) {
  const LogScope log(settings.verbosity);
  Settings resolved;
  {
    const LogScope quiet(Verbosity::quiet);  // what resolving says, the call's profile() says again
    resolved = resolve_launch(settings);
  }
  const OutputClaim claim(resolved, ResultKind::sweep, companions);
}

void OutputClaim::release() noexcept {
  if (fd_ < 0) return;
  // While still holding the lock (see the constructor), and only the file this claim locked.
  if (names_open_file(lock_path_, fd_)) ::unlink(lock_path_.c_str());
  ::close(fd_);
  fd_ = -1;
}

}  // namespace kscope::detail

#pragma once
// A sweep's hold on its output prefix (Settings::output_prefix), for as long as it writes there.
//   - One process at a time: an advisory lock (flock) on <prefix>lock. A second sweep with the same
//     prefix is refused, naming the holder's PID and host, instead of mixing its samples into the
//     first's. The kernel drops the lock of a process that dies, so a killed sweep's prefix is free
//     again (its lock file is taken over); the file is removed when the claim ends.
//   - Nothing measured is lost, nor mixed with another kind's files (core/files/prefix_contents.hpp): a
//     prefix holding another kind of result (a sweep, a race, an evaluation, merged results) is
//     refused whatever the settings. Of the writer's own kind, a finished result is moved aside
//     to numbered backups (<file>.~N~), with one info line, unless Settings::overwrite replaces
//     it or Settings::resume continues it; an unfinished one is refused, naming what the call
//     accepts. A resumed sweep's merge replaces the earlier merge.
//   - The lock file is this process's own: it is never a link (the sweep would write through it,
//     then remove it), nor a file with other names (a hard link), nor anything but a regular file;
//     and no file of the prefix is a link or anything but a regular file.
#include <string>
#include <vector>

#include "core/files/prefix_contents.hpp"
#include "kscope/settings.hpp"

namespace kscope::detail {

// The output prefix, as the writer's caller names it: Settings::output_prefix, output_prefix, OUT_PREFIX.
std::string prefix_option(ResultKind writer);

class OutputClaim {
 public:
  // `companions`: files the caller writes beside the prefix's for the same result (Python's
  // output_csv), moved aside with them and refused as they are. Throws ConfigError (held by
  // another process, files it must not replace) or FileError.
  explicit OutputClaim(const Settings& settings, ResultKind writer = ResultKind::sweep,
                       const std::vector<std::string>& companions = {});
  ~OutputClaim();
  OutputClaim(const OutputClaim&) = delete;
  OutputClaim& operator=(const OutputClaim&) = delete;

 private:
  void release() noexcept;

  std::string lock_path_;
  int fd_ = -1;
};

}  // namespace kscope::detail

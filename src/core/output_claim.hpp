#pragma once
// A sweep's hold on its output prefix (Settings::output_prefix), for as long as it writes there.
//   - One process at a time: an advisory lock (flock) on <prefix>lock. A second sweep with the same
//     prefix is refused, naming the holder's PID and host, instead of mixing its samples into the
//     first's. The kernel drops the lock of a process that dies, so a killed sweep's prefix is free
//     again (its lock file is taken over); the file is removed when the claim ends.
//   - Nothing measured is replaced unasked: without Settings::resume or Settings::overwrite, a prefix
//     that holds an earlier sweep's files is refused, naming them, before anything runs. Merged
//     results are written under the same rule (a resumed sweep's merge may replace an earlier
//     merge, never a measured sweep).
//   - The lock file is this process's own: it is never a link (the sweep would write through it,
//     then remove it), nor a file with other names (a hard link), nor anything but a regular file.
#include <string>
#include <vector>

#include "kscope/settings.hpp"

namespace kscope::detail {

// What will write under the prefix: a sweep's files, or merged results (kscope merge, torchrun's
// rank 0).
enum class PrefixWriter { sweep, merge };

// The output prefix, as the writer's caller names it: Settings::output_prefix, output_prefix, OUT_PREFIX.
std::string prefix_option(PrefixWriter writer);

class OutputClaim {
 public:
  // Throws ConfigError (held by another process, an earlier sweep's files) or FileError.
  explicit OutputClaim(const Settings& settings, PrefixWriter writer = PrefixWriter::sweep);
  ~OutputClaim();
  OutputClaim(const OutputClaim&) = delete;
  OutputClaim& operator=(const OutputClaim&) = delete;

 private:
  void release() noexcept;

  std::string lock_path_;
  int fd_ = -1;
};

// The files of a sweep under `prefix` ("<prefix>manifest.json", ...) that exist and hold something:
// an empty progress.jsonl, or a samples.csv of its header alone (what a sweep that failed as it
// started leaves, a full disk say), records nothing.
std::vector<std::string> sweep_files(const std::string& prefix);

}  // namespace kscope::detail

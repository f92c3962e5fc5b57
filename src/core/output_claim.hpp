#pragma once
// A sweep's hold on its output prefix (Settings::output_prefix), for as long as it writes there.
//   - One process at a time: an advisory lock (flock) on <prefix>lock. A second sweep with the same
//     prefix is refused, naming the holder's PID and host, instead of mixing its samples into the
//     first's. The kernel drops the lock of a process that dies, so a killed sweep's prefix is free
//     again (its lock file is taken over); the file is removed when the claim ends.
//   - Nothing measured is replaced unasked: without Settings::resume or Settings::overwrite, a prefix
//     that holds an earlier sweep's files is refused, naming them, before anything runs.
#include <string>
#include <vector>

#include "kscope/settings.hpp"

namespace kscope::detail {

class OutputClaim {
 public:
  // Throws ConfigError (held by another process, an earlier sweep's files) or FileError.
  explicit OutputClaim(const Settings& settings);
  ~OutputClaim();
  OutputClaim(const OutputClaim&) = delete;
  OutputClaim& operator=(const OutputClaim&) = delete;

 private:
  void release() noexcept;

  std::string lock_path_;
  int fd_ = -1;
};

// The files of a sweep under `prefix` ("<prefix>manifest.json", ...) that exist.
std::vector<std::string> sweep_files(const std::string& prefix);

}  // namespace kscope::detail

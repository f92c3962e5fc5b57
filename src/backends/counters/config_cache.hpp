#pragma once
// CUPTI's configuration images on disk, so that a process's first counters call does not build
// them again: one file per chip, metric list, counter availability, CUPTI version and driver, under
// $XDG_CACHE_HOME/kscope (~/.cache/kscope when it is unset). Never an error: a missing,
// unreadable, truncated, corrupt or foreign file is a miss, and a directory that cannot be written
// is skipped. Two processes storing the same entry each write a temporary file of their own and
// rename it into place (atomic on POSIX), so a reader sees a whole file or none. Pure C++: tested
// without a GPU.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace kscope::counters {

// What an image depends on. Every field goes into the file and must match on load.
struct ConfigKey {
  std::string chip;
  std::vector<std::string> metrics;  // in order: the image evaluates them in this order
  std::vector<std::uint8_t> counter_availability;
  std::string versions;  // CUPTI's and the driver's, as config_versions() gives them

  // The canonical text of the key (the availability as its length and hash).
  std::string text() const;
};

struct CachedConfig {
  std::size_t passes = 0;
  std::vector<std::uint8_t> image;
};

class ConfigCache {
 public:
  static constexpr const char* kFormat = "kscope-cupti-config 1";

  // The cache in `directory`; an empty path is no cache (load misses, store does nothing).
  explicit ConfigCache(std::filesystem::path directory);
  // $XDG_CACHE_HOME/kscope, else $HOME/.cache/kscope, else no cache.
  static ConfigCache for_user();

  const std::filesystem::path& directory() const { return directory_; }
  std::filesystem::path file_of(const ConfigKey& key) const;

  std::optional<CachedConfig> load(const ConfigKey& key) const;
  // Best effort; false when nothing was written (read-only or missing directory, full disk).
  bool store(const ConfigKey& key, const CachedConfig& config) const;

 private:
  std::filesystem::path directory_;
};

}  // namespace kscope::counters

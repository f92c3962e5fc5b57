// CUPTI's configuration images cached on disk: a round trip, and a cache that is missing, corrupt,
// foreign, unwritable or shared by writers in two processes is a miss, never an error or a torn
// read. With CUPTI's host API (offline, chip GH100), a cached image gives the config it was built as.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>

#include "backends/counters/config_cache.hpp"
#include "backends/counters/profiler_host.hpp"
#include "test_support.hpp"

namespace {

namespace fs = std::filesystem;
using kscope::counters::CachedConfig;
using kscope::counters::ConfigCache;
using kscope::counters::ConfigKey;
using kscope_test::ScopedEnv;

ConfigKey key(std::vector<std::uint8_t> availability = {1, 2, 3}) {
  return {"GH100", {"gpu__time_duration.sum", "dram__bytes_read.sum"}, std::move(availability), "cupti 130001"};
}

CachedConfig entry(std::size_t bytes = 4096) {
  CachedConfig c;
  c.passes = 3;
  for (std::size_t i = 0; i < bytes; ++i) c.image.push_back(static_cast<std::uint8_t>(i * 7));
  return c;
}

bool same(const std::optional<CachedConfig>& a, const CachedConfig& b) {
  return a && a->passes == b.passes && a->image == b.image;
}

std::string read(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

void write(const fs::path& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

}  // namespace

TEST(ConfigCache, AStoredImageLoadsBackUnderItsKeyOnly) {
  kscope_test::TempDir dir;
  const ConfigCache cache(dir.prefix("cache"));
  EXPECT_FALSE(cache.load(key()));  // nothing there yet: the directory does not even exist
  ASSERT_TRUE(cache.store(key(), entry()));
  EXPECT_TRUE(same(cache.load(key()), entry()));
  EXPECT_EQ(cache.file_of(key()).parent_path(), fs::path(dir.prefix("cache")));
  EXPECT_EQ(cache.file_of(key()).filename().string().rfind("cupti-config-", 0), 0u);
  // Another availability, chip, metric order or version is another entry.
  EXPECT_FALSE(cache.load(key({1, 2, 4})));
  ConfigKey reordered = key();
  std::swap(reordered.metrics[0], reordered.metrics[1]);
  EXPECT_FALSE(cache.load(reordered));
  ConfigKey newer = key();
  newer.versions = "cupti 130100";
  EXPECT_FALSE(cache.load(newer));
  // Only the entry itself is left: the temporary file was renamed into place.
  EXPECT_EQ(std::distance(fs::directory_iterator(dir.prefix("cache")), fs::directory_iterator()), 1);
}

TEST(ConfigCache, ACorruptOrForeignFileIsAMissAndTheNextStoreMendsIt) {
  kscope_test::TempDir dir;
  const ConfigCache cache(dir.prefix("cache"));
  ASSERT_TRUE(cache.store(key(), entry()));
  const fs::path file = cache.file_of(key());
  const std::string good = read(file);
  std::string flipped = good;
  flipped[good.size() / 2] ^= 0x40;
  for (const std::string& bad : {good.substr(0, good.size() / 2), good.substr(0, 10), std::string(), flipped,
                                 std::string("not a cache file at all, but long enough to be read")}) {
    write(file, bad);
    EXPECT_FALSE(cache.load(key())) << bad.size() << " bytes";
  }
  // The same file name holding another key's entry (a hash collision) is refused by the stored key.
  ASSERT_TRUE(cache.store(key({9}), entry(16)));
  fs::copy_file(cache.file_of(key({9})), file, fs::copy_options::overwrite_existing);
  EXPECT_FALSE(cache.load(key()));
  ASSERT_TRUE(cache.store(key(), entry()));
  EXPECT_TRUE(same(cache.load(key()), entry()));
}

TEST(ConfigCache, ADirectoryThatCannotBeWrittenIsSkippedSilently) {
  kscope_test::TempDir dir;
  write(dir.prefix("a_file"), "x");
  const ConfigCache under_a_file(fs::path(dir.prefix("a_file")) / "kscope");
  EXPECT_FALSE(under_a_file.store(key(), entry()));
  EXPECT_FALSE(under_a_file.load(key()));
  const ConfigCache none{fs::path()};
  EXPECT_FALSE(none.store(key(), entry()));
  EXPECT_FALSE(none.load(key()));
  if (geteuid() == 0) return;  // root writes anywhere
  fs::create_directories(dir.prefix("read_only"));
  fs::permissions(dir.prefix("read_only"), fs::perms::owner_read | fs::perms::owner_exec);
  const ConfigCache read_only(dir.prefix("read_only"));
  EXPECT_FALSE(read_only.store(key(), entry()));
  EXPECT_FALSE(read_only.load(key()));
  fs::permissions(dir.prefix("read_only"), fs::perms::owner_all);
}

// Two processes store the same entry over and over while one of them reads: every read is the whole
// entry (the renames are atomic), never a torn file.
TEST(ConfigCache, TwoProcessesSharingTheCacheNeverReadATornFile) {
  kscope_test::TempDir dir;
  const ConfigCache cache(dir.prefix("cache"));
  const CachedConfig big = entry(1 << 20);
  ASSERT_TRUE(cache.store(key(), big));
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    bool ok = true;
    for (int i = 0; i < 40; ++i) ok = cache.store(key(), big) && ok;
    _exit(ok ? 0 : 1);
  }
  int torn = 0;
  for (int i = 0; i < 40; ++i) {
    EXPECT_TRUE(cache.store(key(), big));
    torn += !same(cache.load(key()), big);
  }
  int status = 0;
  waitpid(child, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "the other process could not store";
  EXPECT_EQ(torn, 0);
  EXPECT_TRUE(same(cache.load(key()), big));
  EXPECT_EQ(std::distance(fs::directory_iterator(dir.prefix("cache")), fs::directory_iterator()), 1);
}

TEST(ConfigCache, LivesUnderXdgCacheHomeElseHome) {
  {
    ScopedEnv xdg("XDG_CACHE_HOME", "/somewhere/cache");
    EXPECT_EQ(ConfigCache::for_user().directory(), fs::path("/somewhere/cache/kscope"));
  }
  ScopedEnv home("HOME", "/home/someone");
  {
    ScopedEnv xdg("XDG_CACHE_HOME", std::nullopt);
    EXPECT_EQ(ConfigCache::for_user().directory(), fs::path("/home/someone/.cache/kscope"));
  }
  {
    ScopedEnv relative("XDG_CACHE_HOME", "relative/cache");  // not absolute: ignored, as the XDG spec says
    EXPECT_EQ(ConfigCache::for_user().directory(), fs::path("/home/someone/.cache/kscope"));
  }
  ScopedEnv no_home("HOME", std::nullopt);
  ScopedEnv xdg("XDG_CACHE_HOME", std::nullopt);
  EXPECT_TRUE(ConfigCache::for_user().directory().empty());
}

// With CUPTI's host API: what the cache gives back is the config CUPTI built, and the process asks
// the cache once per key.
TEST(ConfigCache, ACachedImageGivesTheConfigCuptiBuilt) {
  using kscope::counters::MetricConfig;
  try {
    kscope::counters::supported_chips();
  } catch (const std::exception& e) {
    GTEST_SKIP() << "CUPTI's profiler host API cannot start here (libcupti/libnvperf_host): " << e.what();
  }
  kscope_test::TempDir dir;
  const ConfigCache cache(dir.prefix("cache"));
  const std::vector<std::string> metrics{"gpu__time_duration.sum", "sm__throughput.avg.pct_of_peak_sustained_elapsed"};
  const auto built = MetricConfig::for_device("GH100", metrics, {}, cache);
  EXPECT_EQ(built->passes(), 8u);
  const ConfigKey stored{"GH100", metrics, {}, kscope::counters::config_versions()};
  const auto cached = cache.load(stored);
  ASSERT_TRUE(cached) << "the image was not stored in " << cache.file_of(stored);
  EXPECT_EQ(cached->image, built->image());
  const MetricConfig from_disk("GH100", metrics, {}, *cached);
  EXPECT_EQ(from_disk.passes(), built->passes());
  EXPECT_EQ(from_disk.image(), built->image());
  EXPECT_EQ(MetricConfig::for_device("GH100", metrics, {}, cache), built);  // the process's own, not the disk's
}

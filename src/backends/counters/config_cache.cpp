#include "backends/counters/config_cache.hpp"

#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <system_error>

namespace kscope::counters {
namespace {

// FNV-1a, 64 bits: a file name for a key and a checksum of a file's bytes (not a security hash:
// the key is stored whole and compared on load).
std::uint64_t fnv1a(const void* data, std::size_t size, std::uint64_t hash = 1469598103934665603ull) {
  const auto* bytes = static_cast<const unsigned char*>(data);
  for (std::size_t i = 0; i < size; ++i) hash = (hash ^ bytes[i]) * 1099511628211ull;
  return hash;
}

std::string hex(std::uint64_t value) {
  static const char digits[] = "0123456789abcdef";
  std::string out(16, '0');
  for (int i = 15; i >= 0; --i, value >>= 4) out[static_cast<std::size_t>(i)] = digits[value & 0xf];
  return out;
}

void put_u64(std::string& out, std::uint64_t value) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((value >> (8 * i)) & 0xff));
}

// Reads what put_u64 wrote at `pos`, advancing it; false past the end.
bool get_u64(const std::string& in, std::size_t& pos, std::uint64_t& value) {
  if (in.size() < 8 || pos > in.size() - 8) return false;
  value = 0;
  for (int i = 0; i < 8; ++i) value |= std::uint64_t(static_cast<unsigned char>(in[pos + i])) << (8 * i);
  pos += 8;
  return true;
}

// format line, key, passes, image, checksum of all before it.
std::string encode(const ConfigKey& key, const CachedConfig& config) {
  std::string out = std::string(ConfigCache::kFormat) + "\n";
  const std::string text = key.text();
  put_u64(out, text.size());
  out += text;
  put_u64(out, config.passes);
  put_u64(out, config.image.size());
  out.append(reinterpret_cast<const char*>(config.image.data()), config.image.size());
  put_u64(out, fnv1a(out.data(), out.size()));
  return out;
}

std::optional<CachedConfig> decode(const std::string& in, const ConfigKey& key) {
  const std::string format = std::string(ConfigCache::kFormat) + "\n";
  if (in.size() < format.size() + 8 || in.compare(0, format.size(), format) != 0) return std::nullopt;
  std::size_t checked = in.size() - 8, end = checked;
  std::uint64_t checksum = 0;
  if (!get_u64(in, end, checksum) || checksum != fnv1a(in.data(), checked)) return std::nullopt;
  std::size_t pos = format.size();
  std::uint64_t text_size = 0, passes = 0, image_size = 0;
  if (!get_u64(in, pos, text_size) || text_size > checked - pos) return std::nullopt;
  if (in.compare(pos, text_size, key.text()) != 0 || text_size != key.text().size()) return std::nullopt;
  pos += text_size;
  if (!get_u64(in, pos, passes) || !get_u64(in, pos, image_size) || image_size != checked - pos || passes == 0)
    return std::nullopt;
  CachedConfig config;
  config.passes = passes;
  config.image.assign(in.begin() + static_cast<std::ptrdiff_t>(pos), in.begin() + static_cast<std::ptrdiff_t>(checked));
  return config;
}

}  // namespace

std::string ConfigKey::text() const {
  std::string out = "chip " + chip + "\nversions " + versions + "\nmetrics";
  for (const auto& m : metrics) out += " " + m;
  out += "\navailability " + std::to_string(counter_availability.size()) + " " +
         hex(fnv1a(counter_availability.data(), counter_availability.size())) + "\n";
  return out;
}

ConfigCache::ConfigCache(std::filesystem::path directory) : directory_(std::move(directory)) {}

ConfigCache ConfigCache::for_user() {
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  if (xdg && *xdg && std::filesystem::path(xdg).is_absolute()) return ConfigCache(std::filesystem::path(xdg) / "kscope");
  const char* home = std::getenv("HOME");
  if (home && *home) return ConfigCache(std::filesystem::path(home) / ".cache" / "kscope");
  return ConfigCache({});
}

std::filesystem::path ConfigCache::file_of(const ConfigKey& key) const {
  const std::string text = key.text();
  return directory_ / ("cupti-config-" + hex(fnv1a(text.data(), text.size())) + ".bin");
}

std::optional<CachedConfig> ConfigCache::load(const ConfigKey& key) const {
  if (directory_.empty()) return std::nullopt;
  std::ifstream file(file_of(key), std::ios::binary);
  if (!file) return std::nullopt;
  const std::string bytes((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  if (file.bad()) return std::nullopt;
  return decode(bytes, key);
}

bool ConfigCache::store(const ConfigKey& key, const CachedConfig& config) const {
  if (directory_.empty()) return false;
  std::error_code error;
  std::filesystem::create_directories(directory_, error);
  if (error) return false;
  // A name no other writer uses: this process, and a counter for its threads.
  static std::atomic<unsigned> serial{0};
  const std::filesystem::path target = file_of(key);
  const std::filesystem::path temporary =
      target.string() + ".tmp-" + std::to_string(::getpid()) + "-" + std::to_string(serial++);
  {
    std::ofstream file(temporary, std::ios::binary | std::ios::trunc);
    const std::string bytes = encode(key, config);
    if (!file || !file.write(bytes.data(), static_cast<std::streamsize>(bytes.size())) || !file.flush()) {
      file.close();
      std::filesystem::remove(temporary, error);
      return false;
    }
  }
  std::filesystem::rename(temporary, target, error);
  if (error) {
    std::filesystem::remove(temporary, error);
    return false;
  }
  return true;
}

}  // namespace kscope::counters

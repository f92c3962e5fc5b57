#include "core/sharding.hpp"

#include <charconv>
#include <cstdlib>

#include "base/files.hpp"
#include "kscope/errors.hpp"
#include "kscope/shard.hpp"

namespace kscope {
namespace {

const char* environment(const char* name) {
  const char* value = std::getenv(name);
  return value && *value ? value : nullptr;
}

std::optional<std::size_t> whole_number(const std::string& text) {
  std::size_t n = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (error != std::errc() || end != text.data() + text.size() || text.empty()) return std::nullopt;
  return n;
}

std::size_t environment_number(const char* name, const std::string& launcher) {
  const char* value = environment(name);
  const auto n = value ? whole_number(value) : std::nullopt;
  if (!n)
    throw ConfigError(std::string(name) + (value ? "='" + std::string(value) + "' is not a whole number" : " is not set") +
                      ", but " + launcher + " sharding needs it; set KSCOPE_SHARD=index/count instead");
  return *n;
}

Shard checked(std::size_t index, std::size_t count, const std::string& source) {
  if (count == 0) throw ConfigError(source + ": the shard count is 0; give at least 1");
  if (index >= count)
    throw ConfigError(source + ": shard index " + std::to_string(index) + " is not below the shard count " +
                      std::to_string(count) + " (shards are numbered 0 to count - 1)");
  return {index, count};
}

}  // namespace

std::string Shard::to_string() const { return std::to_string(index) + "/" + std::to_string(count); }

std::string Shard::file_prefix() const {
  return "shard-" + std::to_string(index) + "-of-" + std::to_string(count) + "-";
}

Shard parse_shard(const std::string& text, const std::string& source) {
  const auto slash = text.find('/');
  const auto index = slash == std::string::npos ? std::nullopt : whole_number(text.substr(0, slash));
  const auto count = slash == std::string::npos ? std::nullopt : whole_number(text.substr(slash + 1));
  if (!index || !count)
    throw ConfigError(source + " is '" + text + "', not index/count: write e.g. 0/4 for the first of 4 shards");
  return checked(*index, *count, source + " '" + text + "'");
}

std::optional<LaunchedShard> shard_from_environment() {
  if (const char* text = environment("KSCOPE_SHARD")) return LaunchedShard{parse_shard(text, "KSCOPE_SHARD"), "KSCOPE_SHARD"};
  if (environment("WORLD_SIZE") && environment("RANK")) {
    const std::string launcher = "torchrun";
    const std::size_t rank = environment_number("RANK", launcher), size = environment_number("WORLD_SIZE", launcher);
    const int local_rank =
        environment("LOCAL_RANK") ? static_cast<int>(environment_number("LOCAL_RANK", launcher)) : -1;
    return LaunchedShard{checked(rank, size, "RANK=" + std::to_string(rank) + ", WORLD_SIZE=" + std::to_string(size)),
                         launcher, local_rank};
  }
  if (environment("SLURM_ARRAY_TASK_ID")) {
    const std::string launcher = "Slurm job array";
    const std::size_t id = environment_number("SLURM_ARRAY_TASK_ID", launcher);
    const std::size_t min = environment_number("SLURM_ARRAY_TASK_MIN", launcher);
    const std::size_t count = environment_number("SLURM_ARRAY_TASK_COUNT", launcher);
    const std::size_t step = environment("SLURM_ARRAY_TASK_STEP") ? environment_number("SLURM_ARRAY_TASK_STEP", launcher) : 1;
    const std::string source = "SLURM_ARRAY_TASK_ID=" + std::to_string(id) + " (MIN " + std::to_string(min) +
                               ", STEP " + std::to_string(step) + ", COUNT " + std::to_string(count) + ")";
    if (id < min || step == 0 || (id - min) % step != 0)
      throw ConfigError(source + " is not an evenly stepped array index; use --array=0-<count-1> or set "
                        "KSCOPE_SHARD=index/count in the job script");
    return LaunchedShard{checked((id - min) / step, count, source), launcher};
  }
  return std::nullopt;
}

namespace detail {

Settings resolve_shard(const Settings& settings) {
  Settings resolved = settings;
  resolved.output_prefix = directory_as_prefix(resolved.output_prefix);
  if (!resolved.shard)
    if (const char* text = environment("KSCOPE_SHARD")) resolved.shard = parse_shard(text, "KSCOPE_SHARD");
  if (resolved.shard && resolved.shard->count > 1 && !resolved.output_prefix.empty())
    resolved.output_prefix += resolved.shard->file_prefix();
  return resolved;
}

}  // namespace detail
}  // namespace kscope

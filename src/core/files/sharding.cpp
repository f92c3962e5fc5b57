#include "core/files/sharding.hpp"

#include <charconv>
#include <cstdlib>

#include "base/file_access.hpp"
#include "core/model/caller_language.hpp"
#include "core/model/log.hpp"
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

// A Slurm job array's task: its place among the array's task ids, which Slurm describes by
// _MIN, _MAX, _STEP and _COUNT only. So the ids must be evenly stepped (--array=0-15, 1-15:2,
// 0-15%4); a list (--array=0,3,7) does not say which shard a task is.
std::optional<Shard> slurm_array_task() {
  if (!environment("SLURM_ARRAY_TASK_ID")) return std::nullopt;
  const std::string launcher = "Slurm job array";
  const std::size_t id = environment_number("SLURM_ARRAY_TASK_ID", launcher);
  const std::size_t min = environment_number("SLURM_ARRAY_TASK_MIN", launcher);
  const std::size_t max = environment_number("SLURM_ARRAY_TASK_MAX", launcher);
  const std::size_t count = environment_number("SLURM_ARRAY_TASK_COUNT", launcher);
  const std::size_t step =
      environment("SLURM_ARRAY_TASK_STEP") ? environment_number("SLURM_ARRAY_TASK_STEP", launcher) : 1;
  const std::string source = "SLURM_ARRAY_TASK_ID=" + std::to_string(id) + " (MIN " + std::to_string(min) +
                             ", MAX " + std::to_string(max) + ", STEP " + std::to_string(step) + ", COUNT " +
                             std::to_string(count) + ")";
  const std::string fix =
      "make each task id its shard's index: set KSCOPE_SHARD=$SLURM_ARRAY_TASK_ID/<number of shards> in the job script";
  if (count == 0 || step == 0 || min > max || max - min != (count - 1) * step)
    throw ConfigError(source + ": the array's task ids are not evenly stepped (a list such as --array=0,3,7), so "
                      "Slurm's variables do not say which shard this task measures; " + fix);
  if (id < min || id > max || (id - min) % step != 0)
    throw ConfigError(source + " is not one of the array's evenly stepped task ids; " + fix);
  return checked((id - min) / step, count, source);
}

// A task of an srun step (srun -n 4 ...): SLURM_PROCID of SLURM_STEP_NUM_TASKS, which srun sets
// in each task it starts. A batch script has SLURM_PROCID=0 and SLURM_NTASKS, but no step of its
// own: it is one process, whatever the allocation. A step of one task splits nothing.
std::optional<Shard> srun_task() {
  if (!environment("SLURM_STEP_NUM_TASKS")) return std::nullopt;
  const std::string launcher = "srun";
  const std::size_t tasks = environment_number("SLURM_STEP_NUM_TASKS", launcher);
  if (tasks == 1) return std::nullopt;
  const std::size_t rank = environment_number("SLURM_PROCID", launcher);
  return checked(rank, tasks,
                 "SLURM_PROCID=" + std::to_string(rank) + ", SLURM_STEP_NUM_TASKS=" + std::to_string(tasks));
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
  const auto array = slurm_array_task();
  const auto step = srun_task();
  if (array && step)  // each array task runs an srun of several tasks: array task after array task
    return LaunchedShard{Shard{array->index * step->count + step->index, array->count * step->count},
                         "Slurm job array and srun"};
  if (array) return LaunchedShard{*array, "Slurm job array"};
  if (step) return LaunchedShard{*step, "srun"};
  return std::nullopt;
}

namespace detail {

Settings resolve_launch(const Settings& settings) {
  Settings resolved = settings;
  resolved.output_prefix = directory_as_prefix(resolved.output_prefix);
  if (!resolved.shard)
    if (const char* text = environment("KSCOPE_SHARD")) resolved.shard = parse_shard(text, "KSCOPE_SHARD");
  if (resolved.shard && resolved.shard->count > 1 && !resolved.output_prefix.empty())
    resolved.output_prefix += resolved.shard->file_prefix();
  // Slurm starts a requeued job again (preempted, its node failed, scontrol requeue) with the same
  // script and environment: the same sweep, whose earlier start's files are under the prefix.
  const char* restarts = environment("SLURM_RESTART_COUNT");
  if (restarts && whole_number(restarts).value_or(0) > 0 && !resolved.output_prefix.empty() && !resolved.resume &&
      !resolved.overwrite) {
    resolved.resume = true;
    log_info("SLURM_RESTART_COUNT=" + std::string(restarts) + ": Slurm started this job again, so it continues the "
             "sweep under '" + resolved.output_prefix + "' (as " + option("resume") + spell(" = true", "=True") +
             " does)");
  }
  return resolved;
}

}  // namespace detail
}  // namespace kscope

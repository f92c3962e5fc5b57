#pragma once
// Splitting one sweep over several processes (GPUs, hosts, job-array tasks): shard `index` of
// `count` measures the configs whose index modulo `count` is `index` (round robin, so neighbouring
// configs, often of similar cost, land on different shards). Each shard's files go under
// Settings::output_prefix + "shard-<index>-of-<count>-"; kscope::merge (kscope/merge.hpp) makes
// one result of them.
//
// Settings::shard selects the shard. Left unset, the environment variable KSCOPE_SHARD=index/count
// does (so a launcher can shard an unchanged program). shard_from_environment() also reads the
// launchers' own variables, for programs that opt in to them.
#include <cstddef>
#include <optional>
#include <string>

namespace kscope {

// One shard of a sweep split over processes: the configs whose position modulo count is index.
struct Shard {
  std::size_t index = 0;  // from 0 to count - 1
  std::size_t count = 1;  // the shards the sweep is split into

  // The configs this shard measures: index modulo count.
  bool measures(std::size_t config_index) const { return config_index % count == index; }
  // "index/count", as KSCOPE_SHARD is written.
  std::string to_string() const;
  // "shard-<index>-of-<count>-": where this shard's files go, after the output prefix.
  std::string file_prefix() const;
  bool operator==(const Shard&) const = default;  // the same index of the same count
};

// "index/count" (e.g. "3/8"); throws ConfigError naming `source` and the expected form.
Shard parse_shard(const std::string& text, const std::string& source);

// Where a shard comes from when a program asks its launcher.
struct LaunchedShard {
  Shard shard;  // which shard this process measures
  std::string launcher;  // "KSCOPE_SHARD", "torchrun", "Slurm job array", "srun" or "Slurm job array and srun"
  int local_rank = -1;   // torchrun's LOCAL_RANK: the GPU of this process on its host; -1 otherwise
};

// The first of: KSCOPE_SHARD=index/count; torchrun's RANK and WORLD_SIZE (with LOCAL_RANK);
// Slurm's, a job array's SLURM_ARRAY_TASK_ID, _MIN, _MAX, _STEP and _COUNT (an evenly stepped
// array: task (ID - MIN) / STEP of COUNT) and an srun step's SLURM_PROCID of SLURM_STEP_NUM_TASKS
// (both: array task after array task). Empty when none is set. Throws ConfigError when one is set
// but malformed or inconsistent (e.g. RANK >= WORLD_SIZE, an array of listed ids: --array=0,3,7).
std::optional<LaunchedShard> shard_from_environment();

}  // namespace kscope

#pragma once
// One result from the shards of a sweep (kscope/shard.hpp), measured by several processes, GPUs
// or hosts: the result a single process would have returned for the whole sweep.
#include <string>
#include <vector>

#include "kscope/results.hpp"

namespace kscope {

// Joins the results of every shard of one sweep. Their raw samples go through the same aggregation
// as a single process's (statistics per config, normalization, geomeans over all configs); each
// config's rows keep the session facts (GPU, Host, ...) of the shard that measured it.
// Throws ConfigError, naming the shard and the fix, when the shards are not one sweep's: measured
// with other settings, backends, sweeps or GPU models, split into different counts, a shard missing
// or given twice, or a shard that did not finish its configs. Differences that do not refuse the
// merge (driver versions, observed clocks more than 2% apart) go to `warnings` when it is given,
// else to kscope's log.
Results merge(const std::vector<Results>& shards, std::vector<std::string>* warnings = nullptr);

// The same from disk. Each input is a results file (...results.json) or the output prefix the
// shards were given, which stands for every <prefix>shard-<index>-of-<count>-results.json there.
// A shard whose files are there without results.json (killed, or still running) is named as
// unfinished.
Results merge_files(const std::vector<std::string>& inputs, std::vector<std::string>* warnings = nullptr);

// Writes merged results as <out_prefix>summary.csv, samples.csv and results.json (the name of an
// existing directory stands for that directory) by the rules a sweep writes its files by: the
// prefix is held (<prefix>lock) while they are written, a prefix naming a device (/dev/null) or in
// a missing directory is refused, and so is a prefix that holds a measured sweep's (or another
// kind of result's) files, whatever `overwrite` says (ConfigError naming them). An earlier merge
// there is moved aside to numbered backups (<file>.~N~), or replaced with `overwrite`; `resumed`:
// the merge of a resumed sweep, which replaces the earlier merge it made.
// Returns the prefix written under.
std::string write_merged(const Results& merged, const std::string& out_prefix, bool overwrite, bool resumed = false);

}  // namespace kscope

// kscope::merge: the shards of one sweep, checked to be one sweep's and aggregated as one.
#include "kscope/merge.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <optional>
#include <regex>
#include <set>

#include "base/file_access.hpp"
#include "base/text.hpp"
#include "core/engine/aggregator.hpp"
#include "core/model/caller_language.hpp"
#include "core/model/log.hpp"
#include "core/files/output_claim.hpp"
#include "core/files/output_formats.hpp"
#include "core/engine/sample_stream.hpp"
#include "core/model/settings_table.hpp"
#include "core/model/suggest.hpp"
#include "kscope/errors.hpp"

namespace kscope {
namespace {

struct Source {
  const Results* results;
  std::string origin;  // the file it was read from; empty when given in memory
};

std::string name(const Source& s) {
  const std::string shard = "shard " + s.results->settings().shard->to_string();
  return s.origin.empty() ? shard : shard + " ('" + s.origin + "')";
}

std::string joined(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& i : items) out += (out.empty() ? "" : ", ") + i;
  return out;
}

// A session fact's distinct values over the shards, in order of first appearance.
template <typename Get>
std::vector<std::string> distinct(const std::vector<Source>& shards, Get get) {
  std::vector<std::string> values;
  for (const auto& s : shards)
    if (std::find(values.begin(), values.end(), get(s.results->session())) == values.end())
      values.push_back(get(s.results->session()));
  return values;
}

// "1/8, 3/8"
std::string names_of(const std::vector<Shard>& shards) {
  std::string out;
  for (const auto& s : shards) out += (out.empty() ? "" : ", ") + s.to_string();
  return out;
}

// How to measure these shards (in order of index): their KSCOPE_SHARD or shard option, or their
// tasks of a Slurm job array whose task ids are the shard indexes (docs/scaling-out.md's recipe), in Slurm's
// list syntax ("1,3,5-7").
std::string how_to_run(const std::vector<Shard>& shards) {
  const Shard& first = shards.front();
  const std::string index = std::to_string(first.index), count = std::to_string(first.count);
  std::string ids;
  for (std::size_t i = 0, last; i < shards.size(); i = last + 1) {
    for (last = i; last + 1 < shards.size() && shards[last + 1].index == shards[last].index + 1;) ++last;
    ids += (ids.empty() ? "" : ",") + std::to_string(shards[i].index) +
           (last > i ? "-" + std::to_string(shards[last].index) : "");
  }
  return "KSCOPE_SHARD=" + first.to_string() + (shards.size() > 1 ? " ..." : "") + ", or " +
         detail::spell("Settings::shard = {" + index + ", " + count + "}", "shard=(" + index + ", " + count + ")") +
         "; in a Slurm job array whose task ids are the shard indexes: sbatch --array=" + ids + " <job script>";
}

std::string rerun_hint(const std::vector<Shard>& shards) {
  return std::string(shards.size() > 1 ? "run them" : "run it") + " again (" + how_to_run(shards) +
         ") with the same output prefix and " + detail::option("resume") + detail::spell(" = true", "=True") +
         ", then merge again";
}

// The prefix of the sweep whose shard file `path` is ("out/f-0-" of "out/f-0-shard-1-of-4-results.json").
std::optional<std::string> sweep_prefix_of(const std::string& path, std::size_t count) {
  static const std::regex shard_file("(.*)shard-[0-9]+-of-([0-9]+)-results\\.json");
  std::smatch m;
  if (!std::regex_match(path, m, shard_file) || m[2].str() != std::to_string(count)) return std::nullopt;
  return m[1].str();
}

// The shards by index, each present once, all of one split.
std::vector<Source> by_index(const std::vector<Source>& given) {
  if (given.empty()) throw ConfigError("nothing to merge: give the results of every shard of the sweep");
  for (const auto& s : given)
    if (!s.results->settings().shard)
      throw ConfigError((s.origin.empty() ? std::string("a result") : "'" + s.origin + "'") +
                        " is not a shard: it was measured without " + detail::option("shard") +
                        " or KSCOPE_SHARD; merge only the shards of one sharded sweep" +
                        (s.origin.empty() ? std::string()
                                          : " (these results are whole already: read them with " +
                                                detail::spell("kscope::load_results", "kscope.load") + ")"));
  const std::size_t count = given.front().results->settings().shard->count;
  std::vector<std::optional<Source>> slots(count);
  for (const auto& s : given) {
    const Shard shard = *s.results->settings().shard;
    if (shard.count != count)
      throw ConfigError(name(s) + " and " + name(given.front()) + " come from splits into " + std::to_string(shard.count) +
                        " and " + std::to_string(count) + " shards; merge the shards of one split");
    if (slots[shard.index])
      throw ConfigError(name(s) + " is given twice (also as " + name(*slots[shard.index]) + "); give each shard once");
    slots[shard.index] = s;
  }
  std::vector<Shard> missing;
  for (std::size_t i = 0; i < count; ++i)
    if (!slots[i]) missing.push_back(Shard{i, count});
  if (!missing.empty()) {
    const std::string shards = "shard" + std::string(missing.size() > 1 ? "s " : " ") + names_of(missing) +
                               " of the sweep " + (missing.size() > 1 ? "are" : "is") + " missing";
    // Given by its file, a shard's siblings are usually beside it: the sweep's prefix names them all.
    for (const auto& s : given)
      if (const auto sweep = sweep_prefix_of(s.origin, count)) {
        const std::string sibling = *sweep + "shard-" + std::to_string(missing.front().index) + "-of-" +
                                    std::to_string(count) + "-results.json";
        if (detail::kind_of_file(sibling) == "a regular file")
          throw ConfigError(shards + " from the files given, but '" + sibling + "' is beside them: give the sweep's " +
                            "prefix '" + *sweep + "', which stands for all its shards' files, or every shard's file");
      }
    throw ConfigError(shards + ": run " + (missing.size() > 1 ? "them" : "it") + " (" + how_to_run(missing) +
                      ") and merge all " + std::to_string(count));
  }
  std::vector<Source> out;
  for (auto& s : slots) out.push_back(*s);
  return out;
}

std::string sweep_text(const Results& r) {
  return std::to_string(r.configs().size()) + " configs over (" + joined(r.axis_names()) + ")";
}

// Refuses shards that did not measure the same thing the same way.
void check_one_sweep(const std::vector<Source>& shards) {
  const Source& first = shards.front();
  const Results& a = *first.results;
  for (const auto& s : shards) {
    const Results& b = *s.results;
    const std::string pair = name(s) + " and " + name(first);
    std::string differ;  // the first difference
    if (a.axis_names() != b.axis_names() || a.configs().size() != b.configs().size())
      differ = sweep_text(b) + " and " + sweep_text(a);
    for (std::size_t c = 0; differ.empty() && c < a.configs().size(); ++c)
      if (a.configs()[c].values() != b.configs()[c].values())
        differ = "config " + std::to_string(c + 1) + " is (" + b.configs()[c].to_string() + ") and (" +
                 a.configs()[c].to_string() + ")";
    if (!differ.empty())
      throw ConfigError(pair + " measured different sweeps (" + differ + "); merge the shards of one sweep");
    using detail::SettingsRole;
    if (const auto differences =
            detail::settings_differences(b.settings(), a.settings(), {SettingsRole::measurement, SettingsRole::summary});
        !differences.empty())
      throw ConfigError(pair + " were measured with different settings (" + joined(differences) +
                        "); merge shards measured with the same settings");
    const SessionInfo &x = b.session(), &y = a.session();
    if (x.backend != y.backend || x.replay_passes != y.replay_passes || x.cache_control != y.cache_control ||
        x.clock_control != y.clock_control)
      throw ConfigError(pair + " were measured differently (backend " + to_string(x.backend) + " and " +
                        to_string(y.backend) + ", " + std::to_string(x.replay_passes) + " and " +
                        std::to_string(y.replay_passes) + " replay passes, cache_control " +
                        to_string(x.cache_control) + " and " + to_string(y.cache_control) + ", clock_control " +
                        to_string(x.clock_control) + " and " + to_string(y.clock_control) + ")");
    if (x.gpu != y.gpu)
      throw ConfigError(pair + " ran on different GPU models (" + x.gpu + " and " + y.gpu +
                        "): one table needs one model. Merge the shards of each model separately and compare the "
                        "two results (kscope compare)");
    if (a.info_columns().samples != b.info_columns().samples)
      throw ConfigError(pair + " have different info collector columns; merge shards measured with the same collectors");
  }
}

// Refuses shards with configs they should have measured and did not, naming each.
void check_finished(const std::vector<Source>& shards) {
  std::vector<std::string> problems;
  std::vector<Shard> unfinished;
  for (const auto& s : shards) {
    const Shard shard = *s.results->settings().shard;
    std::set<std::size_t> measured;
    const Samples& samples = s.results->samples();
    for (std::size_t i = 0; i < samples.size(); ++i) measured.insert(samples.store().config(i));
    std::vector<std::string> unmeasured;
    std::size_t expected = 0;
    for (const Config& c : s.results->configs()) {
      if (!shard.measures(c.index())) continue;
      ++expected;
      if (!measured.count(c.index())) unmeasured.push_back(std::to_string(c.index() + 1));
    }
    if (!unmeasured.empty()) {
      problems.push_back(name(s) + " did not finish: " + std::to_string(unmeasured.size()) + " of its " +
                         std::to_string(expected) + " configs have no samples (config " + joined(unmeasured) + " of " +
                         std::to_string(s.results->configs().size()) + ")");
      unfinished.push_back(shard);
    }
  }
  if (!unfinished.empty()) {
    std::string all;
    for (const auto& p : problems) all += (all.empty() ? "" : "; ") + p;
    throw ConfigError(all + "; " + rerun_hint(unfinished));
  }
}

double mean_sm_clock(const Results& r) {
  double sum = 0;
  std::size_t n = 0;
  const detail::SampleStore& samples = r.samples().store();
  for (std::size_t i = 0; i < r.samples().size(); ++i)
    if (const double mhz = samples.conditions(samples.conditions_of(i)).sm_clock_mhz; std::isfinite(mhz)) {
      sum += mhz;
      ++n;
    }
  return n ? sum / static_cast<double>(n) : NAN;
}

// Differences that leave the numbers mergeable but deserve a look.
std::vector<std::string> merge_warnings(const std::vector<Source>& shards) {
  std::vector<std::string> out;
  if (const auto drivers = distinct(shards, [](const SessionInfo& i) { return i.driver_version; }); drivers.size() > 1)
    out.push_back("the shards ran on different NVIDIA drivers (" + joined(drivers) +
                  "): kernel durations can differ between driver versions");
  double low = INFINITY, high = -INFINITY;
  std::string clocks;
  for (const auto& s : shards) {
    const double mhz = mean_sm_clock(*s.results);
    if (std::isnan(mhz)) continue;
    low = std::min(low, mhz);
    high = std::max(high, mhz);
    clocks += (clocks.empty() ? "" : ", ") + name(s) + " " + std::to_string(static_cast<long>(std::lround(mhz))) + " MHz";
  }
  if (high > low * 1.02)
    out.push_back("the shards' observed SM clocks differ by " +
                  std::to_string(static_cast<long>(std::lround((high / low - 1) * 100))) + "% (" + clocks +
                  "): durations measured at different clocks are not comparable; lock the clocks (" +
                  detail::option("clock_control") + " base) or find out why a GPU ran slower");
  return out;
}

Results merge_sources(const std::vector<Source>& given, std::vector<std::string>* warnings) {
  const std::vector<Source> shards = by_index(given);
  check_one_sweep(shards);
  check_finished(shards);
  for (const auto& w : merge_warnings(shards)) {
    if (warnings) warnings->push_back(w);
    else detail::log_warning(w);
  }

  const Results& first = *shards.front().results;
  Settings settings = first.settings();
  settings.shard.reset();  // the merged result is the whole sweep's
  // Config after config, each one's samples shard after shard.
  std::vector<detail::ByConfig> by_config;
  for (const auto& s : shards) by_config.push_back(detail::by_config(s.results->samples().store(), s.results->samples().size()));
  std::vector<MetricSpec> measured;  // their names place the derived rows after the measured ones
  for (const auto& name : first.session().metrics) measured.push_back({name, "", ""});
  detail::Aggregator aggregator(first.configs(), std::move(measured), settings);
  for (std::size_t c = 0; c < first.configs().size(); ++c)
    for (std::size_t s = 0; s < shards.size(); ++s) {
      const detail::ByConfig& b = by_config[s];
      if (c + 1 >= b.starts.size()) continue;
      aggregator.add_samples(shards[s].results->samples(),
                             std::span(b.samples).subspan(b.starts[c], b.starts[c + 1] - b.starts[c]));
    }
  for (const auto& s : shards) {
    std::set<std::size_t> seen;
    for (const auto& row : s.results->rows()) {
      if (seen.insert(row.config_index).second)
        aggregator.set_config_outcome(row.config_index, row.converged, row.thermal_pauses);
      if (row.work) aggregator.add_work(row.annotation, row.config_index, *row.work);
    }
  }

  SessionInfo session = first.session();
  session.thermal_pauses = 0;
  session.thermal_pause_s = 0;
  std::vector<SessionInfo> shard_sessions;
  for (const auto& s : shards) {
    session.thermal_pauses += s.results->session().thermal_pauses;
    session.thermal_pause_s += s.results->session().thermal_pause_s;
    shard_sessions.push_back(s.results->session());
  }
  session.gpu_uuid = joined(distinct(shards, [](const SessionInfo& i) { return i.gpu_uuid; }));
  session.host = joined(distinct(shards, [](const SessionInfo& i) { return i.host; }));
  session.driver_version = joined(distinct(shards, [](const SessionInfo& i) { return i.driver_version; }));
  const Results merged = aggregator.results(session, true);
  return Results(merged.session(), merged.configs(), merged.rows(), merged.samples(), merged.info_columns(),
                 merged.settings(), std::move(shard_sessions));
}

std::string directory_of(const std::string& prefix) {
  const auto directory = std::filesystem::path(prefix).parent_path();
  return directory.empty() ? "." : directory.string();
}

// The shard files of an output prefix: results files, and the shards that have no results file.
struct ShardFiles {
  std::string prefix;  // the shards' own prefix: `prefix`, or the sweep's under it ("sweep/gemm-0-")
  std::vector<std::string> results;
  std::vector<std::string> unfinished;  // "shard i/n" of a manifest without results
  std::vector<std::string> whole;       // the results files of sweeps under `prefix` measured without shards
};

// The shards written under `prefix`: those named `prefix` + "shard-<i>-of-<n>-...", else those of
// the one sweep whose prefix starts with it (Python adds "<function>-<call>-" to the output_prefix
// a sweep is given, so the prefix given to the sweep finds its shards too).
ShardFiles shard_files(const std::string& given) {
  const std::string prefix = detail::directory_as_prefix(given);
  const std::string directory = directory_of(prefix);
  const std::string base = std::filesystem::path(prefix).filename().string();
  const std::regex pattern("(.*)shard-([0-9]+)-of-([0-9]+)-(results|manifest)\\.json");
  struct Sweep {
    std::map<std::string, std::string> results;  // "i/n" -> its results file
    std::set<std::string> started;               // "i/n" with a manifest
  };
  std::map<std::string, Sweep> sweeps;  // by the part between `prefix` and "shard-"
  std::set<std::string> whole;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(directory, error)) {
    const std::string file = entry.path().filename().string();
    std::smatch m;
    if (file.compare(0, base.size(), base) != 0) continue;
    const std::string rest = file.substr(base.size());
    if (!std::regex_match(rest, m, pattern)) {
      if (rest.size() >= 12 && rest.compare(rest.size() - 12, 12, "results.json") == 0 && entry.is_regular_file(error))
        whole.insert((std::filesystem::path(directory) / file).string());
      continue;
    }
    Sweep& sweep = sweeps[m[1].str()];
    const std::string shard = m[2].str() + "/" + m[3].str();
    if (m[4] == "results") sweep.results[shard] = (std::filesystem::path(directory) / file).string();
    else sweep.started.insert(shard);
  }
  if (sweeps.size() > 1 && !sweeps.count("")) {
    std::vector<std::string> prefixes;
    for (const auto& [part, sweep] : sweeps) prefixes.push_back("'" + prefix + part + "'");
    throw ConfigError("'" + given + "' holds the shards of " + std::to_string(sweeps.size()) + " sweeps (under " +
                      joined(prefixes) + "): give the prefix of the one to merge, e.g. " +
                      detail::spell("kscope merge OUT_PREFIX " + prefix + sweeps.begin()->first,
                                    "kscope.merge('" + prefix + sweeps.begin()->first + "')"));
  }
  // The prefix's own shards first: the shards of a sweep given exactly its prefix.
  const auto chosen = sweeps.count("") ? sweeps.find("") : sweeps.begin();
  ShardFiles out{prefix + (chosen == sweeps.end() ? "" : chosen->first), {}, {}, {whole.begin(), whole.end()}};
  if (chosen == sweeps.end()) return out;
  for (const auto& [shard, file] : chosen->second.results) out.results.push_back(file);
  for (const auto& shard : chosen->second.started)
    if (!chosen->second.results.count(shard)) out.unfinished.push_back(shard);
  return out;
}

}  // namespace

Results merge(const std::vector<Results>& shards, std::vector<std::string>* warnings) {
  std::vector<Source> sources;
  for (const auto& r : shards) sources.push_back({&r, ""});
  return merge_sources(sources, warnings);
}

std::string write_merged(const Results& merged, const std::string& out_prefix, bool overwrite, bool resumed) {
  Settings settings;
  settings.output_prefix = detail::directory_as_prefix(out_prefix);
  settings.overwrite = overwrite;
  settings.resume = resumed;
  detail::check_output_prefix(settings, detail::ResultKind::merge);
  const detail::OutputClaim claim(settings, detail::ResultKind::merge);
  merged.write_all(settings.output_prefix);
  return settings.output_prefix;
}

Results merge_files(const std::vector<std::string>& inputs, std::vector<std::string>* warnings) {
  std::vector<std::string> files;
  for (const auto& input : inputs) {
    std::error_code error;
    if (std::filesystem::is_regular_file(input, error)) {
      files.push_back(input);
      continue;
    }
    const ShardFiles found = shard_files(input);
    if (!found.unfinished.empty()) {
      std::vector<Shard> unfinished;
      for (const auto& shard : found.unfinished) unfinished.push_back(parse_shard(shard, "its file name"));
      std::sort(unfinished.begin(), unfinished.end(), [](const Shard& a, const Shard& b) { return a.index < b.index; });
      const bool one = unfinished.size() == 1;
      throw ConfigError("shard" + std::string(one ? " " : "s ") + names_of(unfinished) + " under '" + found.prefix +
                        "' " + (one ? "has" : "have") + " not finished: " + (one ? "its" : "their") +
                        " manifest.json is there but no results.json (killed, interrupted or still running); " +
                        rerun_hint(unfinished));
    }
    if (found.results.empty() && !found.whole.empty()) {
      const bool one = found.whole.size() == 1;
      throw ConfigError("nothing to merge under '" + input + "': it holds the results of " +
                        (one ? "a sweep" : std::to_string(found.whole.size()) + " sweeps") + " measured without " +
                        "shards (" + detail::cut(detail::quoted_list(found.whole), 300) + "), which are whole already: read " +
                        (one ? "them" : "each") + " with " +
                        detail::spell("kscope::load_results(\"" + found.whole.front() + "\")",
                                      "kscope.load('" + found.whole.front() + "')"));
    }
    if (found.results.empty())
      throw ConfigError("nothing to merge under '" + input + "': no results file, and no files named '" +
                        found.prefix + "[...]shard-<index>-of-<count>-results.json' (what the shards of a sweep "
                        "with this " + detail::option("output_prefix") + " write)");
    files.insert(files.end(), found.results.begin(), found.results.end());
  }
  std::vector<Results> loaded;
  loaded.reserve(files.size());
  for (const auto& f : files) loaded.push_back(load_results(f));
  std::vector<Source> sources;
  for (std::size_t i = 0; i < files.size(); ++i) sources.push_back({&loaded[i], files[i]});
  return merge_sources(sources, warnings);
}

}  // namespace kscope

// tune(): checks the request, runs each round of the race as a Session over the configs it visits,
// hands the rounds' durations to the Racer (core/decisions/race.hpp), and builds the Race: every round's runs
// as one Results over the sweep, each raced config's outcome, and the cost against the exhaustive sweep.
#include "kscope/tune.hpp"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <cmath>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <ostream>
#include <set>
#include <utility>

#include "base/file_access.hpp"
#include "core/engine/aggregator.hpp"
#include "core/model/caller_language.hpp"
#include "core/model/derived_columns.hpp"
#include "core/engine/entry.hpp"
#include "core/model/log.hpp"
#include "core/engine/outcome.hpp"
#include "core/files/output_formats.hpp"
#include "core/decisions/race.hpp"
#include "core/engine/session.hpp"
#include "core/files/sharding.hpp"
#include "core/statistics/significance.hpp"
#include "core/model/suggest.hpp"
#include "kscope/backend_registry.hpp"
#include "kscope/detail/config_cells.hpp"
#include "kscope/detail/enum_names.hpp"
#include "kscope/detail/session_headline.hpp"
#include "kscope/metrics.hpp"

namespace kscope {
namespace {

using detail::formatted;
using detail::number_text;
using detail::option;
using detail::spell;

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

std::string race_option(const std::string& field) { return spell("RaceOptions::" + field, field); }

// The backend's duration metric, which decides.
MetricSpec duration_metric(const MeasurementBackend& backend) {
  const std::vector<MetricSpec> metrics = backend.metrics();
  if (metrics.empty() || !detail::is_time_unit(metrics.front().unit))
    throw ConfigError("the " + to_string(backend.describe().backend) + " backend measures " +
                      (metrics.empty() ? std::string("nothing") : "'" + metrics.front().name + "'") +
                      ", not a duration, and the race decides by durations: tune with " +
                      detail::backends_for(detail::entry_rules(detail::Entry::tune)));
  return metrics.front();
}

double seconds_per(const std::string& unit) {
  if (unit == "ns") return 1e-9;
  if (unit == "us" || unit == "\u00b5s" || unit == "\u03bcs") return 1e-6;
  return unit == "ms" ? 1e-3 : 1;
}

// The options the race's decisions depend on, kept under the output prefix: a resumed race takes the
// same decisions again from the runs on disk only with the options it was raced with (others would
// plan other rounds, and the rounds on disk would no longer be theirs).
void keep_race_options(const Settings& settings, const RaceOptions& options) {
  if (settings.output_prefix.empty()) return;
  const std::string path = settings.output_prefix + "race-options.json";
  const nlohmann::ordered_json mine = {{"runs", settings.runs},
                                       {"threshold_pct", options.threshold_pct},
                                       {"alpha", options.alpha},
                                       {"first_runs", options.first_runs},
                                       {"final_runs", options.final_runs},
                                       {"max_finalists", options.max_finalists},
                                       {"annotation", options.annotation}};
  if (settings.resume && std::filesystem::exists(path)) {
    nlohmann::json raced;
    try {
      std::ifstream in(path);
      raced = nlohmann::json::parse(in);
    } catch (const std::exception& e) {
      throw ConfigError("cannot resume the race under " + option("output_prefix") + " '" + settings.output_prefix +
                        "': its options file " + path + " cannot be read (" + e.what() + "): race again with " +
                        option("overwrite") + spell(" = true", "=True") + " (its files are replaced)");
    }
    std::vector<std::string> then, now;
    for (const auto& [name, value] : mine.items()) {
      if (raced.contains(name) && raced[name] == value) continue;
      const std::string spelled = name == "runs" ? option("runs") : race_option(name);
      const auto text = [](const nlohmann::json& v) {
        return v.is_number() ? number_text(v.get<double>()) : v.is_string() ? "'" + v.get<std::string>() + "'" : v.dump();
      };
      then.push_back(spelled + spell(" = ", "=") + (raced.contains(name) ? text(raced[name]) : "(none)"));
      now.push_back(text(value));
    }
    if (!then.empty()) {
      std::string given;
      for (std::size_t i = 0; i < now.size(); ++i) given += (i ? ", " : "") + now[i];
      std::string asked;
      for (std::size_t i = 0; i < then.size(); ++i) asked += (i ? ", " : "") + then[i];
      throw ConfigError("cannot resume the race under " + option("output_prefix") + " '" + settings.output_prefix +
                        "': it was raced with " + asked + " (this call gives " + given + "), and only the options " +
                        "it was raced with take the same decisions again from its runs on disk: resume with " + asked +
                        ", or race again with " + option("overwrite") + spell(" = true", "=True") +
                        " (its files are replaced), or give another " + option("output_prefix"));
    }
    return;
  }
  detail::write_whole(path, [&](std::ostream& out) { out << mine.dump(1) << "\n"; });
}

// Everything the rounds recorded, as one sweep's samples: each config's runs numbered on across rounds.
class Measurements {
 public:
  Measurements(const std::vector<Config>& configs, std::vector<MetricSpec> metrics, const Settings& settings)
      : aggregator_(configs, std::move(metrics), settings), runs_(configs.size(), 0) {}

  void add_round(const Results& round, const std::vector<std::size_t>& sweep_index_of_visit) {
    if (!session_) session_ = round.session();
    std::map<std::pair<std::size_t, std::size_t>, std::size_t> run_of;  // (visit, run in the round) -> run
    for (SampleRow s : round.samples()) {
      const std::size_t config = sweep_index_of_visit.at(s.config_index);
      const auto [at, added] = run_of.try_emplace({s.config_index, s.run}, runs_[config]);
      if (added) ++runs_[config];
      s.config_index = config;
      s.run = at->second;
      aggregator_.add_sample(s);
    }
  }
  Results results(const SessionInfo& fallback) const { return aggregator_.results(session_.value_or(fallback), false); }

 private:
  detail::Aggregator aggregator_;
  std::vector<std::size_t> runs_;
  std::optional<SessionInfo> session_;
};

// The annotation whose duration decides: the one named, or the body's only one.
class DecidingAnnotation {
 public:
  explicit DecidingAnnotation(std::string named) : name_(std::move(named)) {}

  // Checks the regions of a run; throws ConfigError when they cannot decide.
  void check(const std::vector<std::string>& opened) {
    std::set<std::string> names(opened.begin(), opened.end());
    if (names.empty()) return;  // the Session's own check names a body that opens none
    if (!name_.empty()) {
      if (names.count(name_)) return;
      const std::vector<std::string> listed(names.begin(), names.end());
      throw ConfigError(race_option("annotation") + " names '" + name_ + "', which the body did not open (it opened " +
                        detail::quoted_list(listed) + "): name the annotation whose duration decides the race");
    }
    if (names.size() > 1)
      throw ConfigError("the body opened " + std::to_string(names.size()) + " annotations (" +
                        detail::quoted_list(std::vector<std::string>(names.begin(), names.end())) + "): name the one " +
                        "whose duration decides the race with " + race_option("annotation"));
    name_ = *names.begin();
  }
  const std::string& name() const { return name_; }

 private:
  std::string name_;
};

// A round that stopped (a failing body, Ctrl-C), told in the race's terms: the round's own numbering
// of its visits ("config 2/40 (n=1)", the final round's 40 visits) becomes the config's place among the
// sweep's, and the round's count of the rows it kept the race's, whose rounds so far are all kept.
struct RoundStop {
  std::size_t round;
  std::string kind;
  std::size_t visits;
  const std::vector<Config>& raced;
  std::size_t config_count;
  const Settings& settings;

  std::string message(const std::string& round_message, const std::string& config, const Results& kept,
                      const std::string& cpp_holder, const std::string& python_holder) const {
    // The round's message, then on its last line what the round kept: replaced below.
    std::string text = round_message.substr(0, std::min(round_message.rfind('\n'), round_message.size()));
    const auto named = std::find_if(raced.begin(), raced.end(), [&](const Config& c) { return c.to_string() == config; });
    for (std::size_t v = 1; named != raced.end() && v <= visits; ++v) {
      const std::string label = "config " + std::to_string(v) + "/" + std::to_string(visits) + " (" + config + ")";
      if (const std::size_t at = text.find(label); at != std::string::npos) {
        text.replace(at, label.size(), detail::config_label(*named, config_count));
        break;
      }
    }
    std::string out = "race round " + std::to_string(round) + " (" + kind + "): " + text + "\n" +
                      std::to_string(kept.rows().size()) + " summary rows of the race's rounds so far are kept in " +
                      spell(cpp_holder, python_holder);
    if (!settings.output_prefix.empty())
      out += "; each round's runs are on disk under " + settings.output_prefix + "round-<k>-: call tune again with " +
             option("resume") + spell(" = true", "=True") + " to continue the race";
    return out;
  }
};

}  // namespace

void RaceOptions::validate() const {
  const auto check = [](const std::string& name, double value, bool ok, const std::string& accepts) {
    if (!ok) throw ConfigError(race_option(name) + " is " + number_text(value) + ": it takes " + accepts);
  };
  check("threshold_pct", threshold_pct, std::isfinite(threshold_pct) && threshold_pct >= 0 && threshold_pct < 100,
        "a percentage from 0 up to 100 (2 by default)");
  check("alpha", alpha, alpha > 0 && alpha < 1, "a probability between 0 and 1 (0.05 by default)");
  check("first_runs", static_cast<double>(first_runs), first_runs >= 2 && first_runs <= kMaxRunsPerConfig,
        "a count of at least 2 (10 by default): one run has no spread to test");
  check("final_runs", static_cast<double>(final_runs), final_runs >= 2 && final_runs <= kMaxRunsPerConfig,
        "a count of at least 2 (20 by default)");
  check("max_finalists", static_cast<double>(max_finalists), max_finalists >= 2,
        "a count of at least 2 (8 by default)");
}

std::string to_string(RaceOutcome outcome) { return detail::enum_name(outcome); }

Race::Race(Results measurements, std::vector<RaceRow> rows, std::vector<RaceRound> rounds, RaceCost cost,
           RaceOptions options)
    : measurements_(std::move(measurements)),
      rows_(std::move(rows)),
      rounds_(std::move(rounds)),
      cost_(cost),
      options_(std::move(options)) {}

std::size_t Race::winner() const {
  for (const RaceRow& r : rows_)
    if (r.outcome == RaceOutcome::winner) return r.config_index;
  throw ConfigError("this race has no winner: it raced no config (a shard with nothing to measure)");
}

std::vector<std::size_t> Race::ties() const {
  std::vector<std::size_t> out;
  for (const RaceRow& r : rows_)
    if (r.outcome == RaceOutcome::tied) out.push_back(r.config_index);
  return out;
}

namespace {

using RaceColumns = detail::DerivedColumns<Race, RaceRow>;

const RaceColumns& race_table() {
  using R = RaceRow;
  using T = ColumnType;
  static const RaceColumns table{
      {
          {"Outcome", T::text, [](const Race&, const R& r) { return Cell{to_string(r.outcome)}; }},
          {"Round", T::integer, [](const Race&, const R& r) { return detail::count_cell(r.round); }},
          {"Runs", T::integer, [](const Race&, const R& r) { return detail::count_cell(r.runs); }},
          {"MedianNs", T::real, [](const Race&, const R& r) { return Cell{r.median_ns}; }},
          {"FinalMedianNs", T::real, [](const Race&, const R& r) { return Cell{r.final_median_ns}; }},
          {"RatioToWinner", T::real, [](const Race&, const R& r) { return Cell{r.ratio}; }},
          {"RatioCI_Lower", T::real, [](const Race&, const R& r) { return Cell{r.ratio_ci_lower}; }},
          {"RatioCI_Upper", T::real, [](const Race&, const R& r) { return Cell{r.ratio_ci_upper}; }},
          {"Reason", T::text, [](const Race&, const R& r) { return Cell{r.reason}; }},
      },
      0,
      [](const Race& race, const R& r) { return race.measurements().configs().at(r.config_index).values(); }};
  return table;
}

}  // namespace

const std::vector<ColumnSpec>& race_columns() {
  static const std::vector<ColumnSpec> specs = race_table().specs();
  return specs;
}

Table Race::table() const { return race_table().table(*this, rows_, measurements_.axis_names()); }

namespace detail {

const std::vector<DerivedFormat<Race>>& race_formats() {
  static const std::vector<DerivedFormat<Race>> formats{
      {"race table CSV", "race.csv", &write_table_csv<Race, &Race::table>},
  };
  return formats;
}

}  // namespace detail

void Race::write_csv(const std::string& path) const { detail::write_table_csv<Race, &Race::table>(*this, path); }

std::string Race::heading() const {
  const Results& m = measurements_;
  const RaceCost& c = cost_;
  std::string out = "kscope race: " + detail::session_headline(m.session()) + "\n";
  if (!rows_.empty()) {
    out += "winner: " + m.configs().at(winner()).to_string();
    const std::vector<std::size_t> tied = ties();
    if (!tied.empty()) {
      out += "; tied within " + number_text(options_.threshold_pct) + "%:";
      for (std::size_t t : tied) out += " (" + m.configs().at(t).to_string() + ")";
    }
    out += " (confidence " + number_text(100 * confidence()) + "%)\n";
  }
  const double share = 100.0 * static_cast<double>(c.runs) / static_cast<double>(std::max<std::size_t>(c.exhaustive_runs, 1));
  out += "cost: " + std::to_string(c.runs) + " runs of the exhaustive sweep's " + std::to_string(c.exhaustive_runs) +
         " (" + detail::fixed(share, 1) + "%), " + detail::fixed(c.gpu_s * 1e3, 2) + " ms of GPU time of its " +
         detail::fixed(c.exhaustive_gpu_s * 1e3, 2) + " ms, in " + detail::fixed(c.wall_s, 2) + " s\n";
  for (std::size_t k = 0; k < rounds_.size(); ++k) {
    const RaceRound& r = rounds_[k];
    out += "round " + std::to_string(k + 1) + " (" + r.kind + "): " + std::to_string(r.configs) + " configs, " +
           std::to_string(r.runs) + (r.kind == "final" ? " interleaved passes" : " runs each");
    if (r.eliminated) out += ", " + std::to_string(r.eliminated) + " eliminated";
    out += "\n";
  }
  return out;
}

std::ostream& operator<<(std::ostream& out, const Race& race) {
  out << race.heading();
  write_console(race.table(), out);
  return out;
}

namespace {

// The race on the caller's backend, or (`given` null) on the one the registry chooses.
Race run_race(const Sweep& sweep, const Settings& requested, const Body& body, const RaceOptions& options,
              MeasurementBackend* given) {
  const double started_s = now_s();
  detail::EntryCall call(detail::Entry::tune, sweep, requested, body);
  options.validate();
  const std::unique_ptr<MeasurementBackend> made = given ? nullptr : call.make(call.chosen());
  MeasurementBackend& backend = given ? *given : *made;
  const Settings& settings = call.settings();
  const std::vector<Config>& configs = call.configs();
  if (options.first_runs > settings.runs)
    throw ConfigError(race_option("first_runs") + " (" + std::to_string(options.first_runs) + ") is more than " +
                      option("runs") + " (" + std::to_string(settings.runs) + "), the most runs a config gets " +
                      "before the final round: raise " + option("runs") + " (100, say) or lower " +
                      race_option("first_runs"));
  std::optional<detail::OutputClaim> claim;  // the race's files and its rounds', until the last is written
  if (!settings.output_prefix.empty()) claim.emplace(settings, detail::ResultKind::race);
  keep_race_options(settings, options);
  call.start(backend);
  const MetricSpec duration = duration_metric(backend);

  std::vector<Config> raced;
  for (const Config& c : configs)
    if (!settings.shard || settings.shard->measures(c.index())) raced.push_back(c);
  std::vector<std::string> names;
  for (const Config& c : raced) names.push_back(c.to_string());
  detail::Racer racer(names, options, settings.runs);
  const double smallest_p = detail::smallest_one_sided_p(options.first_runs, options.first_runs);
  if (raced.size() > 1 && smallest_p >= racer.elimination_level())
    detail::log_warning(race_option("first_runs") + " = " + std::to_string(options.first_runs) + ": " +
                std::to_string(options.first_runs) + " runs a side can show a difference at p = " +
                number_text(smallest_p) + " at best, not below the elimination level " +
                formatted("%.3g", racer.elimination_level()) + " of " + std::to_string(raced.size()) +
                " configs: nothing is eliminated before the runs double; raise " + race_option("first_runs"));
  if (settings.shard && settings.shard->count > 1)
    detail::log_info("racing shard " + settings.shard->to_string() + " of the sweep: " + std::to_string(raced.size()) +
                     " of its " + std::to_string(configs.size()) + " configs (its winner and ties, raced again with " +
                     "the other shards', decide the sweep)");

  Measurements measurements(configs, backend.metrics(), settings);
  DecidingAnnotation deciding(options.annotation);
  RaceCost cost;
  cost.exhaustive_runs = raced.size() * (settings.warmup_runs + settings.runs);
  const double unit_s = seconds_per(duration.unit);
  std::vector<double> sum(configs.size(), 0);  // of each config's valid durations, in the metric's unit
  std::vector<std::size_t> count(configs.size(), 0);
  auto names_ptr = std::make_shared<const std::vector<std::string>>(sweep.names());
  for (std::size_t k = 1; const auto plan = racer.next_round(); ++k) {
    // The round's configs are its visits, in order: the same config may come back (the final round).
    std::vector<Config> visits;
    std::vector<std::size_t> sweep_index;
    for (std::size_t v = 0; v < plan->visits.size(); ++v) {
      const Config& config = raced[plan->visits[v]];
      visits.emplace_back(names_ptr, config.values(), v);
      sweep_index.push_back(config.index());
    }
    Settings round = settings;
    round.runs = plan->runs;
    // A cold-cache final visit needs no warm-up: every config warmed up in the screening round, and a
    // flushed L2 is the same whatever ran before; a warm cache keeps them, so that each run finds its
    // own data there as in a profile.
    if (plan->kind == "final" && settings.cache_control == CacheControl::all) round.warmup_runs = 0;
    // The final's visits are of one run each: its progress is the race's line, not a line per visit.
    if (plan->kind == "final" && !round.progress_observer) round.progress_observer = [](const SweepProgress&) {};
    round.shard.reset();
    if (!settings.output_prefix.empty()) round.output_prefix = settings.output_prefix + "round-" + std::to_string(k) + "-";
    detail::log_info("race round " + std::to_string(k) + " (" + plan->kind + "): " +
                     (plan->kind == "final" ? std::to_string(plan->visits.size() / plan->passes) + " finalists, " +
                                                  std::to_string(plan->passes) + " interleaved passes"
                                            : std::to_string(plan->visits.size()) + " configs, " +
                                                  std::to_string(plan->runs) + " runs each"));
    const Body visit_body = [&](const Config& visit) { body(raced[plan->visits[visit.index()]]); };
    detail::SessionHooks hooks;
    hooks.single_runs_by_design = plan->kind == "final";  // one run a visit, judged across the visits
    bool checked = false;
    hooks.on_run_measured = [&](const RunContext&, const std::vector<RegionRecord>& regions, const RunMeasurement&) {
      if (checked) return;
      std::vector<std::string> opened;
      for (const RegionRecord& r : regions) opened.push_back(r.name);
      deciding.check(opened);
      checked = true;
    };
    Results measured;
    try {
      measured = detail::Session(visits, round, visit_body, backend, std::move(hooks)).run();
    } catch (const SweepError& e) {
      measurements.add_round(e.partial_results(), sweep_index);
      auto kept = std::make_shared<const Results>(measurements.results(backend.describe()));
      const RoundStop stop{k, plan->kind, plan->visits.size(), raced, configs.size(), settings};
      throw SweepError(stop.message(e.what(), e.failed_config(), *kept, "SweepError::partial_results()",
                                    "the error's partial_results"),
                       e.failed_config(), e.cause(), kept);
    } catch (const SweepInterrupted& e) {
      measurements.add_round(e.partial_results(), sweep_index);
      auto kept = std::make_shared<const Results>(measurements.results(backend.describe()));
      const RoundStop stop{k, plan->kind, plan->visits.size(), raced, configs.size(), settings};
      throw SweepInterrupted(stop.message(e.what(), e.interrupted_config(), *kept,
                                          "SweepInterrupted::partial_results()", "the exception's partial_results"),
                             e.interrupted_config(), kept);
    }
    measurements.add_round(measured, sweep_index);
    // The deciding annotation's durations, per visit in run order (a round read back from disk was never checked).
    std::vector<std::string> opened;
    for (const SummaryRow& r : measured.rows()) opened.push_back(r.annotation);
    deciding.check(opened);
    std::vector<std::vector<detail::RunSample>> samples(visits.size());
    for (const SampleRow& s : measured.samples())
      if (s.annotation == deciding.name() && s.metric == duration.name) {
        samples.at(s.config_index).push_back({s.value, s.sm_clock_mhz});
        const std::size_t config = sweep_index[s.config_index];
        if (!std::isnan(s.value)) sum[config] += s.value, ++count[config];
      }
    for (const auto& visit : samples) {
      double visit_sum = 0;
      std::size_t valid = 0;
      for (const detail::RunSample& s : visit)
        if (!std::isnan(s.duration)) visit_sum += s.duration, ++valid;
      cost.runs += round.warmup_runs + plan->runs;
      if (valid) cost.gpu_s += visit_sum * (1 + static_cast<double>(round.warmup_runs) / static_cast<double>(valid)) * unit_s;
    }
    racer.record_round(*plan, samples);
  }
  for (const Config& c : raced)
    if (count[c.index()])
      cost.exhaustive_gpu_s += static_cast<double>(settings.warmup_runs + settings.runs) * sum[c.index()] /
                               static_cast<double>(count[c.index()]) * unit_s;
  cost.wall_s = now_s() - started_s;

  std::vector<RaceRow> rows = racer.rows();
  for (RaceRow& r : rows) r.config_index = raced[r.config_index].index();
  Race race(measurements.results(backend.describe()), std::move(rows), racer.rounds(), cost, options);
  if (!settings.output_prefix.empty()) {
    race.measurements().write_all(settings.output_prefix);
    detail::write_derived_files(race, detail::race_formats(), settings.output_prefix);
  }
  return race;
}

}  // namespace

Race tune_with_backend(const Sweep& sweep, const Settings& settings, const Body& body, const RaceOptions& options,
                       MeasurementBackend& backend) {
  return run_race(sweep, settings, body, options, &backend);
}

Race tune(const Sweep& sweep, const Settings& settings, const Body& body, const RaceOptions& options) {
  return run_race(sweep, settings, body, options, nullptr);
}

}  // namespace kscope

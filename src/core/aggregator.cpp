#include "core/aggregator.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

#include "core/attribution.hpp"
#include "core/caller.hpp"
#include "core/info_collection.hpp"
#include "core/log.hpp"
#include "core/roofline.hpp"
#include "core/suggest.hpp"
#include "kscope/energy.hpp"
#include "kscope/errors.hpp"

namespace kscope::detail {
namespace {

double mean_ignoring_nan(double a, double b) {
  if (std::isnan(a)) return b;
  if (std::isnan(b)) return a;
  return 0.5 * (a + b);
}

double mean_of_valid(const std::vector<double>& values) {
  double sum = 0;
  std::size_t n = 0;
  for (double v : values)
    if (!std::isnan(v)) sum += v, ++n;
  return n ? sum / static_cast<double>(n) : NAN;
}

}  // namespace

Aggregator::Aggregator(std::vector<Config> configs, std::vector<MetricSpec> metrics, const Settings& settings)
    : configs_(std::move(configs)), metrics_(std::move(metrics)), settings_(settings), outcomes_(configs_.size()) {
  for (const auto& m : metrics_) metric_names_.push_back(m.name);
  kernel_metrics_ = static_cast<std::size_t>(
      std::count_if(metrics_.begin(), metrics_.end(), [](const MetricSpec& m) { return !is_energy_metric(m.name); }));
}

void Aggregator::set_config_outcome(std::size_t config_index, std::optional<bool> converged,
                                        std::size_t thermal_pauses) {
  outcomes_[config_index] = ConfigOutcome{converged, thermal_pauses};
}

void Aggregator::add_samples(std::vector<SampleRow> samples) {
  for (const auto& s : samples) declare_work(s.annotation, s.config_index);
  samples_.insert(samples_.end(), std::make_move_iterator(samples.begin()), std::make_move_iterator(samples.end()));
}

void Aggregator::add_work(const std::string& annotation, std::size_t config_index, const Work& work) {
  works_[{annotation, config_index}] = work;
}

void Aggregator::declare_work(const std::string& annotation, std::size_t config_index) {
  if (!settings_.work) return;
  const auto [it, added] = works_.try_emplace({annotation, config_index});
  if (!added) return;
  try {
    it->second = settings_.work(annotation, configs_[config_index]);
  } catch (...) {
    works_.erase(it);  // asked again if the sweep goes on
    throw;
  }
}

bool Aggregator::enters_statistics(const SampleRow& s) const {
  return !(s.throttled && settings_.throttled_runs == ThrottledRuns::exclude);
}

void Aggregator::add_to_series(const SampleRow& sample) {
  if (!enters_statistics(sample)) return;
  const std::pair<std::string, std::string> key{sample.annotation, sample.metric};
  auto it = std::find(series_keys_.begin(), series_keys_.end(), key);
  if (it == series_keys_.end()) {
    series_keys_.push_back(key);
    series_.emplace_back();
    it = series_keys_.end() - 1;
  }
  series_[static_cast<std::size_t>(it - series_keys_.begin())].push_back(sample.value);
}

void Aggregator::check_run(const std::vector<RegionRecord>& regions, const RunMeasurement& measured) const {
  attribute_run(regions, measured, kernel_metrics_, settings_);
}

void Aggregator::add_run(const RecordedRun& run) {
  add_regions(run, attribute_run(run.regions, run.measured, kernel_metrics_, settings_));
}

void Aggregator::add_regions(const RecordedRun& run, const std::vector<RegionMeasurement>& regions) {
  const Config& config = configs_[run.config];
  const double sm = mean_ignoring_nan(run.before.sm_mhz, run.after.sm_mhz);
  const double mem = mean_ignoring_nan(run.before.memory_mhz, run.after.memory_mhz);
  if (series_config_ != run.config) {
    series_config_ = run.config;
    series_keys_.clear();
    series_.clear();
  }
  // The run's samples enter together, once derive_metric has accepted all of them: a run is never half kept.
  std::vector<SampleRow> rows;
  std::vector<bool> measured_metric;
  for (std::size_t r = 0; r < regions.size(); ++r) {
    const RegionMeasurement& region = regions[r];
    declare_work(region.annotation, run.config);
    const std::vector<Cell> info = run.info && r < run.info->size() ? (*run.info)[r] : std::vector<Cell>{};
    if (region.failed && failure_warned_.insert({region.annotation, run.config}).second)
      log_warning("annotation '" + region.annotation + "' failed in config (" + config.to_string() +
                      ") and was recorded as NaN (ignore_failures): " + region.failure_reason,
                  WarningKind::run);
    auto add = [&](const std::string& metric, const std::string& unit, double value, bool measured) {
      rows.push_back(SampleRow{region.annotation, run.config, run.run, metric, unit, value, region.kernel, sm, mem,
                               run.throttled, info});
      measured_metric.push_back(measured);
    };
    for (std::size_t m = 0; m < metrics_.size(); ++m) add(metrics_[m].name, metrics_[m].unit, region.values[m], true);
    if (settings_.derive_metric) {
      // A failed run still yields the derived names (called on its NaN values), valued NaN.
      const MeasuredValues measured(&metric_names_, &region.values);
      std::vector<DerivedValue> derived;
      try {
        derived = settings_.derive_metric(measured, config);
      } catch (...) {
        throw CallbackFailure(option("derive_metric"), std::current_exception());
      }
      for (const auto& d : derived) {
        if (std::find(metric_names_.begin(), metric_names_.end(), d.name) != metric_names_.end())
          throw ConfigError("derive_metric returned a value named '" + d.name + "', the name of a measured metric: "
                            "its values would be averaged into that metric's row. " +
                            spell("Give the DerivedValue another name",
                                  "Name the function differently, or return a dict with another key"));
        check_unit(region.annotation, d, config);
        add(d.name, d.unit, region.failed ? NAN : d.value, false);
      }
    }
  }
  for (std::size_t i = 0; i < rows.size(); ++i) {
    samples_.push_back(std::move(rows[i]));
    if (measured_metric[i]) add_to_series(samples_.back());
  }
}

void Aggregator::check_unit(const std::string& annotation, const DerivedValue& derived, const Config& config) {
  auto [known, first] = derived_units_.try_emplace({annotation, derived.name}, DerivedUnit{derived.unit});
  if (first || known->second.unit == derived.unit || known->second.warned) return;
  known->second.warned = true;
  log_warning(option("derive_metric") + " returned the unit '" + derived.unit + "' for '" + derived.name +
              "' of annotation '" + annotation + "' at config (" + config.to_string() + "), '" + known->second.unit +
              "' before: the rows of one metric are read, plotted and compared on one scale, so return one unit "
              "for every config (convert the value instead); each row's Unit is that of its first run");
}

Results Aggregator::results(const SessionInfo& session, bool normalize) const {
  struct Group {
    const SampleRow* first;
    std::vector<double> values, sm, mem;
    std::size_t throttled = 0;
    std::vector<const SampleRow*> runs;  // those entering the statistics
  };
  using Key = std::tuple<std::string, std::size_t, std::string>;
  std::map<Key, std::size_t> index;
  std::vector<Group> groups;
  for (const auto& s : samples_) {
    auto [it, inserted] = index.try_emplace(Key{s.annotation, s.config_index, s.metric}, groups.size());
    if (inserted) groups.push_back(Group{&s, {}, {}, {}, 0, {}});
    Group& g = groups[it->second];
    g.throttled += s.throttled;
    if (!enters_statistics(s)) continue;
    g.values.push_back(s.value);
    g.runs.push_back(&s);
    g.sm.push_back(s.sm_clock_mhz);
    g.mem.push_back(s.memory_clock_mhz);
  }

  const auto& collectors = settings_.info_collectors;
  const InfoLayout info = info_layout(collectors, samples_);
  std::vector<SummaryRow> rows;
  std::vector<std::vector<const SampleRow*>> runs_of_row;
  for (const auto& g : groups) {
    SummaryRow row;
    row.annotation = g.first->annotation;
    row.config_index = g.first->config_index;
    row.metric = g.first->metric;
    row.unit = g.first->unit;
    row.stats = summarize(g.values, settings_.stable_rsd_pct);
    row.avg_value = row.stats.mean;
    row.normalization_value = NAN;
    row.geomean = NAN;
    row.kernel = g.first->kernel;
    row.observed_sm_clock_mhz = mean_of_valid(g.sm);
    row.observed_memory_clock_mhz = mean_of_valid(g.mem);
    row.throttled_runs = g.throttled;
    row.converged = outcomes_[row.config_index].converged;
    row.thermal_pauses = outcomes_[row.config_index].thermal_pauses;
    row.info = summarize_info(collectors, info, g.runs, *g.first);
    rows.push_back(std::move(row));
    runs_of_row.push_back(g.runs);
  }
  add_roofline(rows, runs_of_row, session, normalize);  // while runs_of_row is in the rows' order
  // Nsight Python's order: every measured metric's rows before the derived ones, each part by
  // annotation (in order of first appearance), then config and metric as recorded.
  std::vector<std::string> annotations;
  for (const auto& r : rows)
    if (std::find(annotations.begin(), annotations.end(), r.annotation) == annotations.end())
      annotations.push_back(r.annotation);
  const auto place = [&](const SummaryRow& r) {
    const bool derived = std::find(metric_names_.begin(), metric_names_.end(), r.metric) == metric_names_.end();
    return std::pair{derived, std::find(annotations.begin(), annotations.end(), r.annotation) - annotations.begin()};
  };
  std::stable_sort(rows.begin(), rows.end(), [&](const SummaryRow& a, const SummaryRow& b) { return place(a) < place(b); });

  const std::string& baseline = settings_.normalize_against;
  if (normalize && !baseline.empty() && !samples_.empty()) {  // a shard may hold no configs
    if (std::find(annotations.begin(), annotations.end(), baseline) == annotations.end()) {
      throw ConfigError("normalize_against names annotation '" + baseline +
                        "', which no run recorded; recorded annotations: " + quoted_list(annotations));
    }
    std::map<std::pair<std::size_t, std::string>, double> base;
    for (const auto& r : rows)
      if (r.annotation == baseline) base[{r.config_index, r.metric}] = r.stats.mean;
    // As in Nsight Python: only AvgValue is divided, and rows without a baseline value are dropped.
    std::vector<SummaryRow> kept;
    for (auto& r : rows) {
      auto it = base.find({r.config_index, r.metric});
      if (it == base.end()) continue;
      r.normalized = baseline;
      r.normalization_value = it->second;
      r.avg_value = r.stats.mean / it->second;
      kept.push_back(std::move(r));
    }
    rows = std::move(kept);
    std::string zero;
    for (const auto& [where, value] : base)
      if (value == 0)
        zero += (zero.empty() ? "" : "; ") + where.second + " at config (" + configs_[where.first].to_string() + ")";
    if (!zero.empty())
      log_warning(option("normalize_against") + " '" + baseline + "' has an AvgValue of 0 for " + zero + ", so the rows divided by it there are infinite or NaN: normalize against "
                  "an annotation whose values are not 0 for those metrics");
  }

  std::map<std::pair<std::string, std::string>, std::vector<double>> by_series;
  for (const auto& r : rows) by_series[{r.annotation, r.metric}].push_back(r.avg_value);
  for (auto& r : rows) r.geomean = geometric_mean(by_series[{r.annotation, r.metric}]);

  SessionInfo measured = session;
  if (!metric_names_.empty()) measured.metrics = metric_names_;
  return Results(std::move(measured), configs_, std::move(rows), samples_, info.columns, settings_);
}

void Aggregator::add_roofline(std::vector<SummaryRow>& rows, const std::vector<std::vector<const SampleRow*>>& runs,
                              const SessionInfo& session, bool final) const {
  if (works_.empty()) return;
  // The duration of an (annotation, config): its first metric in a unit of time, which is the
  // measured one when one is (measured metrics come before derived ones).
  std::set<std::pair<std::string, std::size_t>> timed;
  std::set<std::string> annotations, kinds_warned;
  bool any_point = false, any_work = false, dram_warned = false;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    SummaryRow& row = rows[i];
    annotations.insert(row.annotation);
    const auto found = works_.find({row.annotation, row.config_index});
    if (found == works_.end() || !found->second) continue;
    row.work = found->second;
    any_work = true;
    if (std::isnan(seconds_per(row.unit)) || !timed.insert({row.annotation, row.config_index}).second) continue;
    row.roofline = roofline_point(*row.work, runs[i], session, settings_.bound_thresholds);
    any_point = true;
    if (final && row.work->bytes > 0 && std::isnan(row.roofline.dram_roof_gbps) && !dram_warned) {
      dram_warned = true;
      log_warning("the DRAM roof of " + (session.gpu.empty() ? std::string("this device") : session.gpu) +
                  " is unknown (its memory clock or bus width could not be read): DRAMRoofPct and Bound stay empty");
    }
    if (!final || row.work->flops == 0) continue;
    if (const std::string why = missing_compute_roof(session, row.work->kind);
        !why.empty() && kinds_warned.insert(to_string(row.work->kind)).second)
      log_warning("annotation '" + row.annotation + "' declares " + to_string(row.work->kind) + " FLOPs, but " + why +
                  ": its compute roof, ComputeRoofPct and Bound stay empty");
  }
  if (!final) return;
  if (any_work && !any_point)
    log_warning(option("work") + " is declared, but these results hold no duration metric (a metric in a unit of "
                "time), which the roofline divides the work by: no roofline columns. Measure a duration too (" +
                spell("the default Backend::cupti", "the default backend") + ", or gpu__time_duration.sum with the "
                "counters backend)");
  std::vector<std::string> unknown;
  for (const auto& name : settings_.work.annotations())
    if (!annotations.count(name)) unknown.push_back(name);
  if (!unknown.empty() && !annotations.empty())
    log_warning(option("work") + " names " + quoted_list(unknown) + ", which no run recorded; recorded annotations: " +
                quoted_list(std::vector<std::string>(annotations.begin(), annotations.end())));
}

}  // namespace kscope::detail

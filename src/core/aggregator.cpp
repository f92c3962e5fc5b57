#include "core/aggregator.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

#include "core/attribution.hpp"
#include "core/caller.hpp"
#include "core/info_collection.hpp"
#include "core/log.hpp"
#include "core/suggest.hpp"
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
}

void Aggregator::set_config_outcome(std::size_t config_index, std::optional<bool> converged,
                                        std::size_t thermal_pauses) {
  outcomes_[config_index] = ConfigOutcome{converged, thermal_pauses};
}

void Aggregator::add_samples(std::vector<SampleRow> samples) {
  samples_.insert(samples_.end(), std::make_move_iterator(samples.begin()), std::make_move_iterator(samples.end()));
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
  attribute_run(regions, measured, metrics_.size(), settings_);
}

void Aggregator::add_run(const RecordedRun& run) {
  const std::vector<RegionMeasurement> regions = attribute_run(run.regions, run.measured, metrics_.size(), settings_);
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
      for (const auto& d : settings_.derive_metric(measured, config)) {
        if (std::find(metric_names_.begin(), metric_names_.end(), d.name) != metric_names_.end())
          throw ConfigError("derive_metric returned a value named '" + d.name + "', the name of a measured metric: "
                            "its values would be averaged into that metric's row. " +
                            spell("Give the DerivedValue another name",
                                  "Name the function differently, or return a dict with another key"));
        add(d.name, d.unit, region.failed ? NAN : d.value, false);
      }
    }
  }
  for (std::size_t i = 0; i < rows.size(); ++i) {
    samples_.push_back(std::move(rows[i]));
    if (measured_metric[i]) add_to_series(samples_.back());
  }
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
  }
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
  }

  // One geomean per (annotation, metric), over its configs: computed once, not once per row.
  std::map<std::pair<std::string, std::string>, std::vector<double>> by_series;
  for (const auto& r : rows) by_series[{r.annotation, r.metric}].push_back(r.avg_value);
  std::map<std::pair<std::string, std::string>, double> geomeans;
  for (const auto& [series, values] : by_series) geomeans[series] = geometric_mean(values);
  for (auto& r : rows) r.geomean = geomeans[{r.annotation, r.metric}];

  SessionInfo measured = session;
  if (!metric_names_.empty()) measured.metrics = metric_names_;
  return Results(std::move(measured), configs_, std::move(rows), samples_, info.columns, settings_);
}

}  // namespace kscope::detail

#include "core/engine/aggregator.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <tuple>

#include "base/text.hpp"
#include "core/model/attribution.hpp"
#include "core/model/backend_choice.hpp"
#include "core/model/caller_language.hpp"
#include "core/engine/info_collection.hpp"
#include "core/engine/roofline_point.hpp"
#include "core/model/log.hpp"
#include "core/model/row_roofline.hpp"
#include "core/model/suggest.hpp"
#include "kscope/energy.hpp"
#include "kscope/errors.hpp"
#include "kscope/metrics.hpp"
#include "kscope/statistics.hpp"

namespace kscope::detail {
namespace {

double mean_ignoring_nan(double a, double b) {
  if (std::isnan(a)) return b;
  if (std::isnan(b)) return a;
  return 0.5 * (a + b);
}

// Throws ConfigError unless a row holds the normalize_against annotation `baseline`.
void check_recorded(const std::string& baseline, const std::vector<SummaryRow>& rows) {
  std::vector<std::string> annotations;
  for (const auto& r : rows)
    if (std::find(annotations.begin(), annotations.end(), r.annotation) == annotations.end())
      annotations.push_back(r.annotation);
  if (std::find(annotations.begin(), annotations.end(), baseline) == annotations.end())
    throw ConfigError("normalize_against names annotation '" + baseline +
                      "', which no run recorded; recorded annotations: " + quoted_list(annotations));
}

// One geomean per (annotation, metric), over its configs: computed once, not once per row.
void set_geomeans(std::vector<SummaryRow>& rows) {
  std::map<std::pair<std::string, std::string>, std::vector<double>> by_series;
  for (const auto& r : rows) by_series[{r.annotation, r.metric}].push_back(r.avg_value);
  std::map<std::pair<std::string, std::string>, double> geomeans;
  for (const auto& [series, values] : by_series) geomeans[series] = geometric_mean(values);
  for (auto& r : rows) r.geomean = geomeans[{r.annotation, r.metric}];
}

}  // namespace

Aggregator::Aggregator(std::vector<Config> configs, std::vector<MetricSpec> metrics, const Settings& settings,
                       AttributionRules rules, bool single_runs_by_design)
    : configs_(std::move(configs)),
      metrics_(std::move(metrics)),
      settings_(settings),
      rules_(rules),
      single_runs_by_design_(single_runs_by_design),
      outcomes_(configs_.size()) {
  for (const auto& m : metrics_) {
    metric_names_.push_back(m.name);
    metric_ids_.push_back(store_->text_id(m.name));
    unit_ids_.push_back(store_->text_id(m.unit));
  }
  if (const auto energy = std::find(metric_names_.begin(), metric_names_.end(), kEnergyPerRun);
      energy != metric_names_.end())
    energy_per_run_ = static_cast<std::size_t>(energy - metric_names_.begin());
  kernel_metrics_ = static_cast<std::size_t>(
      std::count_if(metrics_.begin(), metrics_.end(), [](const MetricSpec& m) { return !is_energy_metric(m.name); }));
}

void Aggregator::set_config_outcome(std::size_t config_index, std::optional<bool> converged,
                                        std::size_t thermal_pauses) {
  outcomes_[config_index] = ConfigOutcome{converged, thermal_pauses};
}

void Aggregator::add_sample(const SampleRow& sample) {
  declare_work(sample.annotation, sample.config_index);
  store_->append(sample);
}

void Aggregator::add_samples(const Samples& from, std::span<const std::uint32_t> which) {
  SampleStore::Copier copier(from.store(), *store_);
  for (std::size_t i : which) copier.copy(i);
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

bool Aggregator::enters_statistics(bool throttled) const {
  return !(throttled && settings_.throttled_runs == ThrottledRuns::exclude);
}

void Aggregator::add_to_series(SampleStore::Id label, bool throttled, double value) {
  if (!enters_statistics(throttled)) return;
  const SampleStore::Id key = store_->label(label).series;
  auto it = std::find(series_keys_.begin(), series_keys_.end(), key);
  if (it == series_keys_.end()) {
    series_keys_.push_back(key);
    series_.emplace_back();
    it = series_keys_.end() - 1;
  }
  series_[static_cast<std::size_t>(it - series_keys_.begin())].push_back(value);
}

void Aggregator::check_run(const std::vector<RegionRecord>& regions, const RunMeasurement& measured) const {
  attribute_run(regions, measured, kernel_metrics_, settings_, rules_);
}

void Aggregator::add_run(const RecordedRun& run) {
  add_regions(run, attribute_run(run.regions, run.measured, kernel_metrics_, settings_, rules_));
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
  SampleStore& store = *store_;
  // The run's samples enter together, once derive_metric has accepted all of them: a run is never half kept.
  struct Pending {
    double value;
    SampleStore::Id label, conditions, info;
    bool measured;
  };
  std::vector<Pending> pending;
  for (std::size_t r = 0; r < regions.size(); ++r) {
    const RegionMeasurement& region = regions[r];
    try {
      declare_work(region.annotation, run.config);
    } catch (...) {
      throw CallbackFailure(option("work"), std::current_exception());
    }
    const SampleStore::Id info = run.info && r < run.info->size() ? store.info_id((*run.info)[r]) : 0;
    const SampleStore::Id conditions =
        store.conditions_id({sm, mem, run.throttled, run.other_process, region.overlap_ns, region.host_gap_ns});
    warn_if_combined_overlap(region, config);
    warn_if_host_gap(region, config);
    if (region.failed && failure_warned_.insert({region.annotation, run.config}).second)
      log_warning("annotation '" + region.annotation + "' failed in config (" + config.to_string() +
                      ") and was recorded as NaN (ignore_failures): " + region.failure_reason,
                  WarningKind::run);
    const SampleStore::Id annotation = store.text_id(region.annotation), kernel = store.text_id(region.kernel);
    std::vector<std::string> derived_names;
    const auto add_derived = [&](const DerivedValue& d) {
      pending.push_back({region.failed ? NAN : d.value,
                         store.label_id(annotation, store.text_id(d.name), store.text_id(d.unit), kernel), conditions,
                         info, false});
      derived_names.push_back(d.name);
    };
    for (std::size_t m = 0; m < metrics_.size(); ++m)
      pending.push_back(
          {region.values[m], store.label_id(annotation, metric_ids_[m], unit_ids_[m], kernel), conditions, info, true});
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
        add_derived(d);
      }
    }
    // With declared work the energy per run gives FLOP/J and bytes/J, unless derive_metric named them itself.
    if (!energy_per_run_ || works_.empty()) continue;
    if (const auto work = works_.find({region.annotation, run.config}); work != works_.end() && work->second)
      for (const auto& d : energy_efficiency(region.values[*energy_per_run_], work->second->flops, work->second->bytes))
        if (std::find(derived_names.begin(), derived_names.end(), d.name) == derived_names.end()) add_derived(d);
  }
  for (const Pending& p : pending) {
    store.append(p.value, run.config, run.run, p.label, p.conditions, p.info);
    if (p.measured) add_to_series(p.label, run.throttled, p.value);
  }
}

void Aggregator::warn_if_combined_overlap(const RegionMeasurement& region, const Config& config) {
  if (!(region.overlap_ns > 0) || settings_.replay_mode == ReplayMode::range ||
      !overlap_warned_.insert(region.annotation).second)
    return;
  log_warning("the kernels of annotation '" + region.annotation + "' ran at the same time (" +
                  fixed(region.overlap_ns / 1e3, 2) + " us of overlap at config (" + config.to_string() + ")), and " +
                  option("combine_kernel_metrics") +
                  " combines their values as if one ran after the other (added durations count the overlap twice). "
                  "OverlapNs in the samples and OverlappedRuns in the summary say how much; " + option("replay_mode") +
                  spell(" = ReplayMode::range", "='range'") + " measures the region's span instead",
              WarningKind::run);
}

void Aggregator::warn_if_host_gap(const RegionMeasurement& region, const Config& config) {
  if (!(region.host_gap_ns > 0) || !host_gap_warned_.insert(region.annotation).second) return;
  log_warning("the GPU waited " + fixed(region.host_gap_ns / 1e3, 2) + " us for the host before the first work of "
                  "annotation '" + region.annotation + "' (" + region.first_work + ") at config (" +
                  config.to_string() + "), and its value includes that wait: the region is timed from its start "
                  "on the default stream, which the GPU reached before that work was enqueued (Python enqueueing "
                  "on a side stream, a CUDA graph's launch, a thread starting, or no L2 flush ahead of the region "
                  "to hide the host's time). HostGapNs in the samples and HostGapRuns in the summary say which "
                  "runs and how much; " + backend_choice(Backend::cupti) + " times the kernels alone",
              WarningKind::run);
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

std::vector<SummaryRow> Aggregator::summarize_samples(const InfoLayout& info, const SessionInfo& session,
                                                     bool final) const {
  const SampleStore& store = *store_;
  using Index = std::uint32_t;
  const ByConfig configs = by_config(store, store.size());

  std::vector<SummaryRow> rows;
  std::vector<std::size_t> first_samples;  // per row
  std::vector<std::ptrdiff_t> group_of(store.series_count(), -1);
  std::vector<SampleStore::Id> groups;  // of the config: their series, first seen first
  std::vector<Index> member_start, members;
  std::vector<double> values;
  std::vector<const std::vector<Cell>*> infos;
  std::vector<SampleStore::Id> timed;  // the config's annotations whose duration row has its roofline
  std::vector<TimedRun> durations;
  const auto& collectors = settings_.info_collectors;
  for (const std::size_t c : configs.configs) {
    const Index* block = configs.samples.data() + configs.starts[c];
    const std::size_t size = configs.starts[c + 1] - configs.starts[c];
    // The config's samples by summary row (annotation, metric), each row's in the order recorded.
    groups.clear();
    member_start.assign(1, 0);
    for (std::size_t k = 0; k < size; ++k) {
      const SampleStore::Id series = store.label(store.label_of(block[k])).series;
      if (group_of[series] < 0) {
        group_of[series] = static_cast<std::ptrdiff_t>(groups.size());
        groups.push_back(series);
        member_start.push_back(0);
      }
      ++member_start[static_cast<std::size_t>(group_of[series]) + 1];
    }
    for (std::size_t g = 0; g < groups.size(); ++g) member_start[g + 1] += member_start[g];
    members.resize(size);
    {
      std::vector<Index> next(member_start.begin(), member_start.end() - 1);
      for (std::size_t k = 0; k < size; ++k)
        members[next[static_cast<std::size_t>(group_of[store.label(store.label_of(block[k])).series])]++] = block[k];
    }
    for (const SampleStore::Id series : groups) group_of[series] = -1;
    timed.clear();

    for (std::size_t g = 0; g < groups.size(); ++g) {
      const std::size_t first = members[member_start[g]];
      const SampleStore::Label& label = store.label(store.label_of(first));
      values.clear();
      infos.clear();
      double sm_sum = 0, mem_sum = 0;
      std::size_t sm_count = 0, mem_count = 0, throttled = 0, other_process = 0, overlapped = 0, host_gap = 0;
      for (Index k = member_start[g]; k < member_start[g + 1]; ++k) {
        const std::size_t i = members[k];
        const SampleStore::Conditions& run = store.conditions(store.conditions_of(i));
        throttled += run.throttled;
        other_process += run.other_process;
        overlapped += run.overlap_ns > 0;
        host_gap += run.host_gap_ns > 0;
        if (!enters_statistics(run.throttled)) continue;
        values.push_back(store.value(i));
        infos.push_back(&store.info(store.info_of(i)));
        if (!std::isnan(run.sm_clock_mhz)) sm_sum += run.sm_clock_mhz, ++sm_count;
        if (!std::isnan(run.memory_clock_mhz)) mem_sum += run.memory_clock_mhz, ++mem_count;
      }
      SummaryRow row;
      row.annotation = store.text(label.annotation);
      row.config_index = c;
      row.metric = store.text(label.metric);
      row.unit = store.text(label.unit);
      row.stats = summarize(values, settings_.stable_rsd_pct);
      row.avg_value = row.stats.mean;
      row.normalization_value = NAN;
      row.geomean = NAN;
      row.kernel = store.text(label.kernel);
      row.observed_sm_clock_mhz = sm_count ? sm_sum / static_cast<double>(sm_count) : NAN;
      row.observed_memory_clock_mhz = mem_count ? mem_sum / static_cast<double>(mem_count) : NAN;
      row.throttled_runs = throttled;
      row.other_process_runs = other_process;
      row.overlapped_runs = overlapped;
      row.host_gap_runs = host_gap;
      row.converged = outcomes_[c].converged;
      row.thermal_pauses = outcomes_[c].thermal_pauses;
      row.info = summarize_info(collectors, info, infos, store.info(store.info_of(first)));
      if (const auto work = works_.empty() ? works_.end() : works_.find({row.annotation, c});
          work != works_.end() && work->second) {
        row.work = work->second;
        // The duration of an (annotation, config): its first metric in a unit of time, which is the
        // measured one when one is (their samples come before the derived ones').
        const double row_unit_seconds = seconds_per(row.unit);
        if (!std::isnan(row_unit_seconds) && std::find(timed.begin(), timed.end(), label.annotation) == timed.end()) {
          timed.push_back(label.annotation);
          durations.clear();
          for (Index k = member_start[g]; k < member_start[g + 1]; ++k) {
            const std::size_t i = members[k];
            const SampleStore::Conditions& run = store.conditions(store.conditions_of(i));
            if (!enters_statistics(run.throttled)) continue;
            const SampleStore::Id unit = store.label(store.label_of(i)).unit;
            const double unit_seconds = unit == label.unit ? row_unit_seconds : seconds_per(store.text(unit));
            durations.push_back({store.value(i) * unit_seconds, run.sm_clock_mhz, run.memory_clock_mhz});
          }
          row.roofline = roofline_point(*row.work, durations, session, settings_.bound_thresholds);
        }
      }
      rows.push_back(std::move(row));
      first_samples.push_back(first);
    }
  }
  if (final) {
    warn_about_roofline(rows, session);  // in the order recorded, before Nsight's
    if (!single_runs_by_design_) warn_about_single_runs(rows);
  }
  // Nsight Python's order: every measured metric's rows before the derived ones, each part by
  // annotation (in order of first appearance), then config and metric as recorded (the order of
  // their first samples). Sweeps with one annotation and no derived metric have it already.
  std::vector<std::size_t> by_first(rows.size());
  std::iota(by_first.begin(), by_first.end(), 0);
  if (!std::is_sorted(first_samples.begin(), first_samples.end()))
    std::sort(by_first.begin(), by_first.end(), [&](std::size_t a, std::size_t b) { return first_samples[a] < first_samples[b]; });
  std::vector<std::string> annotations;
  std::vector<std::tuple<bool, std::size_t, std::size_t>> places(rows.size());  // (derived, annotation, position)
  for (std::size_t position = 0; position < by_first.size(); ++position) {
    const SummaryRow& r = rows[by_first[position]];
    auto annotation = std::find(annotations.begin(), annotations.end(), r.annotation);
    if (annotation == annotations.end()) annotation = annotations.insert(annotations.end(), r.annotation);
    const bool derived = std::find(metric_names_.begin(), metric_names_.end(), r.metric) == metric_names_.end();
    places[by_first[position]] = {derived, static_cast<std::size_t>(annotation - annotations.begin()), position};
  }
  if (std::is_sorted(places.begin(), places.end())) return rows;
  std::vector<std::size_t> order(rows.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return places[a] < places[b]; });
  std::vector<SummaryRow> sorted;
  sorted.reserve(rows.size());
  for (std::size_t r : order) sorted.push_back(std::move(rows[r]));
  return sorted;
}

Results Aggregator::results(const SessionInfo& session, bool normalize) const {
  const InfoLayout info = info_layout(settings_.info_collectors, *store_);
  std::vector<SummaryRow> rows = summarize_samples(info, session, normalize);
  if (normalize && !settings_.normalize_against.empty() && store_->size() > 0)  // a shard may hold no configs
    rows = normalized(std::move(rows));
  set_geomeans(rows);
  SessionInfo measured = session;
  if (!metric_names_.empty()) measured.metrics = metric_names_;
  return Results(std::move(measured), configs_, std::move(rows), Samples(store_, store_->size()), info.columns,
                 settings_);
}

std::vector<SummaryRow> Aggregator::normalized(std::vector<SummaryRow> rows) const {
  const std::string& baseline = settings_.normalize_against;
  check_recorded(baseline, rows);
  std::map<std::pair<std::size_t, std::string>, double> base;  // (config, metric) -> the baseline's mean
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
  std::string zero;
  for (const auto& [where, value] : base)
    if (value == 0)
      zero += (zero.empty() ? "" : "; ") + where.second + " at config (" + configs_[where.first].to_string() + ")";
  if (!zero.empty())
    log_warning(option("normalize_against") + " '" + baseline + "' has an AvgValue of 0 for " + zero + ", so the rows divided by it there are infinite or NaN: normalize against "
                "an annotation whose values are not 0 for those metrics");
  return kept;
}

void Aggregator::warn_about_single_runs(const std::vector<SummaryRow>& rows) const {
  const auto one = static_cast<std::size_t>(
      std::count_if(rows.begin(), rows.end(), [](const SummaryRow& r) { return r.stats.count == 1; }));
  if (one == 0) return;
  log_warning((one == rows.size() ? "every row rests" : counted(one, "row") + " of " + std::to_string(rows.size()) +
                                                             (one == 1 ? " rests" : " rest")) +
              " on one recorded run (" + option("runs") + " = " + std::to_string(settings_.runs) +
              "): one sample has no spread, so StdDev, the 95% CI and RelativeStdDevPct are NaN and a comparison "
              "cannot judge " + (one == 1 ? "it" : "them") + ". Record more runs: " +
              spell("Settings::runs = 10", "runs=10") + " or more gives an interval worth reading");
}

void Aggregator::warn_about_roofline(const std::vector<SummaryRow>& rows, const SessionInfo& session) const {
  if (works_.empty()) return;
  std::set<std::string> annotations, kinds_warned;
  bool any_point = false, any_work = false, dram_warned = false;
  for (const SummaryRow& row : rows) {
    annotations.insert(row.annotation);
    if (!row.work) continue;
    any_work = true;
    if (std::isnan(row.roofline.arithmetic_intensity)) continue;  // not its (annotation, config)'s duration row
    any_point = true;
    if (row.work->bytes > 0 && std::isnan(row.roofline.dram_roof_gbps) && !dram_warned) {
      dram_warned = true;
      log_warning("the DRAM roof of " + (session.gpu.empty() ? std::string("this device") : session.gpu) +
                  " is unknown (its memory clock or bus width could not be read): DRAMRoofPct and Bound stay empty");
    }
    if (row.work->flops == 0) continue;
    if (const std::string why = missing_compute_roof(session, row.work->kind);
        !why.empty() && kinds_warned.insert(to_string(row.work->kind)).second)
      log_warning("annotation '" + row.annotation + "' declares " + to_string(row.work->kind) + " FLOPs, but " + why +
                  ": its compute roof, ComputeRoofPct and Bound stay empty");
  }
  if (any_work && !any_point)
    log_warning(option("work") + " is declared, but these results hold no duration metric (a metric in a unit of "
                "time), which the roofline divides the work by: no roofline columns. Measure a duration too (" +
                spell("the default Backend::cupti", "the default backend") + ", or " + kGpuTimeDuration + " with the counters backend)");
  std::vector<std::string> unknown;
  for (const auto& name : settings_.work.annotations())
    if (!annotations.count(name)) unknown.push_back(name);
  if (!unknown.empty() && !annotations.empty())
    log_warning(option("work") + " names " + quoted_list(unknown) + ", which no run recorded; recorded annotations: " +
                quoted_list(std::vector<std::string>(annotations.begin(), annotations.end())));
}

}  // namespace kscope::detail

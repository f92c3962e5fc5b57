#pragma once
// Turns measurements into Results, whatever measured them (a backend in this process, the kernels
// of an Nsight Compute report): attribution of kernels to regions, derived metrics per run,
// statistics per (annotation, config, metric), normalization and geomeans.
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "core/model/attribution.hpp"
#include "core/model/sample_store.hpp"
#include "kscope/measurement_backend.hpp"
#include "kscope/results.hpp"

namespace kscope::detail {

struct InfoLayout;

// One recorded run, as measured.
struct RecordedRun {
  std::size_t config = 0;
  std::size_t run = 0;  // recorded run in the config, 0-based (warm-ups are not given)
  const std::vector<RegionRecord>& regions;
  const RunMeasurement& measured;  // per region index, its kernels
  ClockReading before{};           // around the run; NaN when unknown
  ClockReading after{};
  bool throttled = false;
  const std::vector<std::vector<Cell>>* info = nullptr;  // per region: the info collectors' values
  bool other_process = false;  // another process ran kernels on the GPU during the run
};

class Aggregator {
 public:
  // single_runs_by_design: rows of one run are the caller's plan (a race's final round, judged
  // across its visits), not a user's runs=1 to warn about.
  Aggregator(std::vector<Config> configs, std::vector<MetricSpec> metrics, const Settings& settings,
             AttributionRules rules = {}, bool single_runs_by_design = false);

  // Attributes the run's kernels to its regions (throws AnnotationError when a region breaks a
  // rule) and applies derive_metric to each region's values, before any aggregation.
  void add_run(const RecordedRun& run);
  // The same for regions already attributed, with a value for every metric: an energy window's
  // runs folded into one sample (core/engine/repetition_window.hpp). run.measured is not read.
  void add_regions(const RecordedRun& run, const std::vector<RegionMeasurement>& regions);
  // How many values each kernel measurement holds: the metrics but the energy ones, which are
  // measured per window.
  std::size_t kernel_metrics() const { return kernel_metrics_; }
  // The same rules for a run that is not recorded (a warm-up): throws, adds nothing.
  void check_run(const std::vector<RegionRecord>& regions, const RunMeasurement& measured) const;

  // Samples already attributed and derived (those of the finished configs of a resumed sweep, read
  // back from disk; the shards of a sweep): kept as they are, so the results are those of one
  // uninterrupted sweep. Settings::work is asked for the annotation and config of a sample read
  // back from disk as for measured runs (a shard's rows carry their work: add_work).
  void add_sample(const SampleRow& sample);
  void add_samples(const Samples& from, std::span<const std::uint32_t> which);
  // Keeps only the first `count` samples: those added since are dropped (a resumed config whose
  // records turn out incomplete). Never after results() has shared them.
  void keep_samples(std::size_t count) { store_->truncate(count); }
  // Work declared elsewhere (a merged shard's rows carry theirs), for an annotation and config.
  void add_work(const std::string& annotation, std::size_t config_index, const Work& work);

  // How a config's sampling ended (converged: empty for fixed runs) and its thermal pauses.
  struct ConfigOutcome {
    std::optional<bool> converged;
    std::size_t thermal_pauses = 0;
  };
  void set_config_outcome(std::size_t config_index, std::optional<bool> converged, std::size_t thermal_pauses);
  const ConfigOutcome& config_outcome(std::size_t config_index) const { return outcomes_[config_index]; }

  // Every sample so far, in the order recorded.
  const SampleStore& samples() const { return *store_; }

  // The values so far of each measured (not derived) metric of each annotation of the config
  // recorded last, as they enter the statistics (throttled runs left out when Settings exclude
  // them). Kept up to date by add_run, so reading it costs nothing.
  const std::vector<std::vector<double>>& current_config_series() const { return series_; }

  // normalize=false skips normalize_against (partial results, whose baseline may be missing).
  // Throws ConfigError when normalize_against names an annotation that never ran.
  Results results(const SessionInfo& session, bool normalize) const;

 private:
  bool enters_statistics(bool throttled) const;
  void add_to_series(SampleStore::Id label, bool throttled, double value);
  // Warns once per annotation whose kernels ran at the same time and were combined as if they had not.
  void warn_if_combined_overlap(const RegionMeasurement& region, const Config& config);
  // Warns once per annotation whose value holds a wait of the GPU for the host (a backend timing the region).
  void warn_if_host_gap(const RegionMeasurement& region, const Config& config);
  // Warns once per (annotation, derived metric) whose unit changes between runs or configs.
  void check_unit(const std::string& annotation, const DerivedValue& derived, const Config& config);
  // Asks Settings::work once per annotation and config; throws what it throws.
  void declare_work(const std::string& annotation, std::size_t config_index);
  // The summary rows in Nsight Python's order (measured metrics before derived ones, by annotation,
  // then as first recorded), with their declared work and roofline; without normalization and
  // geomeans. `final`: warn about what the declared work could not give.
  std::vector<SummaryRow> summarize_samples(const InfoLayout& info, const SessionInfo& session, bool final) const;
  // The rows divided by the normalize_against annotation's mean at the same config and metric (its
  // AvgValue), those without one dropped; warns of a baseline of 0.
  std::vector<SummaryRow> normalized(std::vector<SummaryRow> rows) const;
  // Warns once about each thing the declared work of the rows could not give (no duration metric,
  // an unknown roof, a work function naming no recorded annotation).
  void warn_about_roofline(const std::vector<SummaryRow>& rows, const SessionInfo& session) const;
  // Warns once when rows rest on one recorded run (runs=1, Nsight Python's default): no spread, no
  // interval, nothing compare() can judge.
  void warn_about_single_runs(const std::vector<SummaryRow>& rows) const;

  std::vector<Config> configs_;
  std::vector<MetricSpec> metrics_;
  std::vector<std::string> metric_names_;
  std::size_t kernel_metrics_ = 0;
  std::optional<std::size_t> energy_per_run_;  // its index in metric_names_, when measured
  const Settings& settings_;
  AttributionRules rules_;
  bool single_runs_by_design_;

  std::shared_ptr<SampleStore> store_ = std::make_shared<SampleStore>();
  std::vector<SampleStore::Id> metric_ids_, unit_ids_;  // of metrics_, in the store
  std::size_t series_config_ = static_cast<std::size_t>(-1);
  std::vector<SampleStore::Id> series_keys_;  // the store's series ids: (annotation, metric)
  std::vector<std::vector<double>> series_;
  std::set<std::pair<std::string, std::size_t>> failure_warned_;  // (annotation, config)
  std::set<std::string> overlap_warned_;                            // annotations
  std::set<std::string> host_gap_warned_;                           // annotations
  struct DerivedUnit {
    std::string unit;  // the first run's
    bool warned = false;
  };
  std::map<std::pair<std::string, std::string>, DerivedUnit> derived_units_;  // (annotation, derived metric)
  std::vector<ConfigOutcome> outcomes_;
  std::map<std::pair<std::string, std::size_t>, std::optional<Work>> works_;  // (annotation, config)
};

}  // namespace kscope::detail

#pragma once
// Accumulates the samples of a session and turns them into Results: statistics per
// (annotation, config, metric), derived metrics, normalization and geomeans.
#include <optional>
#include <vector>

#include "core/attribution.hpp"
#include "kscope/measurement_backend.hpp"
#include "kscope/results.hpp"

namespace kscope::detail {

class ResultsBuilder {
 public:
  ResultsBuilder(SessionInfo session, std::vector<Config> configs, std::vector<MetricSpec> metrics,
                 const Settings& settings);

  // One recorded run: derive_metric is applied here, per run, before any aggregation.
  void add_run(const Config& config, std::size_t run, const std::vector<RegionMeasurement>& regions,
               ClockReading before, ClockReading after, bool throttled);

  // How a config's sampling ended (converged: empty for fixed runs) and its thermal pauses.
  void set_config_outcome(std::size_t config_index, std::optional<bool> converged, std::size_t thermal_pauses);

  // The values so far of each measured (not derived) metric of each annotation of the config
  // recorded last, as they enter the statistics (throttled runs left out when Settings exclude
  // them). Kept up to date by add_run, so reading it costs nothing.
  const std::vector<std::vector<double>>& current_config_series() const { return series_; }

  void set_session(SessionInfo session) { session_ = std::move(session); }

  // normalize=false skips normalize_against (used for partial results, whose baseline may be missing).
  // Throws ConfigError when normalize_against names an annotation that never ran.
  Results build(bool normalize) const;

 private:
  SessionInfo session_;
  std::vector<Config> configs_;
  std::vector<MetricSpec> metrics_;
  std::vector<std::string> metric_names_;
  const Settings& settings_;
  bool enters_statistics(const SampleRow& s) const;

  std::vector<SampleRow> samples_;
  std::size_t series_config_ = static_cast<std::size_t>(-1);
  std::vector<std::pair<std::string, std::string>> series_keys_;  // (annotation, metric)
  std::vector<std::vector<double>> series_;
  struct Outcome {
    std::optional<bool> converged;
    std::size_t thermal_pauses = 0;
  };
  std::vector<Outcome> outcomes_;
};

}  // namespace kscope::detail

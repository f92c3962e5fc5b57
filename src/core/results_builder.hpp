#pragma once
// Accumulates the samples of a session and turns them into Results: statistics per
// (annotation, config, metric), derived metrics, normalization and geomeans.
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
               ClockReading before, ClockReading after);

  // normalize=false skips normalize_against (used for partial results, whose baseline may be missing).
  // Throws ConfigError when normalize_against names an annotation that never ran.
  Results build(bool normalize) const;

 private:
  SessionInfo session_;
  std::vector<Config> configs_;
  std::vector<MetricSpec> metrics_;
  std::vector<std::string> metric_names_;
  const Settings& settings_;
  std::vector<SampleRow> samples_;
};

}  // namespace kscope::detail

#include "core/engine/request_checks.hpp"

#include "core/model/caller_language.hpp"
#include "core/model/metric_request.hpp"
#include "core/engine/sample_stream.hpp"
#include "kscope/detail/collector_names.hpp"
#include "kscope/energy.hpp"
#include "kscope/errors.hpp"

namespace kscope::detail {

std::vector<Config> check_request(const Sweep& sweep, const Settings& settings, const Body& body) {
  std::vector<Config> configs = sweep.configs();  // validates the sweep
  settings.validate();
  check_output_prefix(settings);
  std::vector<std::string> collector_names;
  for (const InfoCollector& c : settings.info_collectors) collector_names.push_back(c.name);
  check_collector_names_against_axes(collector_names, sweep.names());  // the rest: settings.validate()
  if (!body) throw ConfigError(spell("profile() was given an empty body function", "the profiled function is None"));
  return configs;
}

void check_backend_measures(const Settings& settings, const MeasurementBackend& backend) {
  std::vector<std::string> measured;
  for (const auto& m : session_metrics(backend, settings)) measured.push_back(m.name);
  check_requested_metrics(settings.metrics, measured, to_string(backend.describe().backend));
}

std::vector<MetricSpec> session_metrics(const MeasurementBackend& backend, const Settings& settings) {
  std::vector<MetricSpec> metrics = backend.metrics();
  for (const auto& name : energy_metrics_requested(settings.metrics))
    for (const auto& spec : energy_metrics())
      if (spec.name == name) metrics.push_back(spec);
  return metrics;
}

}  // namespace kscope::detail

#include "core/model/backend_choice.hpp"

#include <algorithm>

#include "core/model/caller_language.hpp"
#include "core/model/metric_request.hpp"
#include "core/model/suggest.hpp"
#include "kscope/backend_registry.hpp"
#include "kscope/errors.hpp"
#include "kscope/metrics.hpp"

namespace kscope {

namespace detail {

std::string backend_choice(Backend b) {
  return spell("Backend::" + to_string(b), "backend=" + (b == Backend::from_metrics ? "None" : "'" + backend_label(b) + "'"));
}

std::string backend_label(Backend b) {
  const std::string& python = definition(b).python_name;
  return caller() == Caller::cpp || python.empty() ? to_string(b) : python;
}

}  // namespace detail

Backend chosen_backend(const Settings& settings) {
  if (settings.backend != Backend::from_metrics) return settings.backend;
  const std::vector<std::string> metrics = detail::backend_metrics(settings.metrics);
  if (metrics.empty()) return Backend::cupti;
  // A duration backend's own metric picks that backend; with anything else it cannot be measured.
  for (const Backend duration : registered_backends()) {
    const BackendDefinition& d = definition(duration);
    if (!d.capabilities.measures_duration) continue;
    const std::string& own = d.default_metrics.front();
    const auto mine = std::count(metrics.begin(), metrics.end(), own);
    if (mine == 0) continue;
    if (static_cast<std::size_t>(mine) == metrics.size()) return duration;
    throw ConfigError("Invalid value " + detail::python_list(metrics) + " for 'metrics': '" + own + "' is the " +
                      to_string(duration) + " backend's duration, which is measured alone; the other names are " +
                      "hardware counters, measured by " + detail::backend_choice(Backend::counters) +
                      ". Measure them in two calls, or list " + kGpuTimeDuration + " (the counters' kernel "
                      "duration) instead of '" + own + "'");
  }
  return Backend::counters;
}

}  // namespace kscope

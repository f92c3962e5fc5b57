#pragma once
// Settings::metrics against what a backend measures: the duration backends measure exactly one
// metric of their own (and the energy metrics beside it), so any other name is an error before
// anything runs.
#include <string>
#include <vector>

namespace kscope::detail {

// Throws ConfigError unless every requested metric is one of `measured` (by the backend named
// `backend`). An empty request asks for the backend's own metrics.
void check_requested_metrics(const std::vector<std::string>& requested, const std::vector<std::string>& measured,
                             const std::string& backend);

// The requested metrics a backend measures: all but the energy metrics, which the session measures
// beside a duration backend (kscope/energy.hpp).
std::vector<std::string> backend_metrics(const std::vector<std::string>& requested);
// The energy metrics requested, in the order asked for.
std::vector<std::string> energy_metrics_requested(const std::vector<std::string>& requested);
// Throws ConfigError for a metric named like an energy metric that is none of them.
void check_energy_spelling(const std::vector<std::string>& requested);

}  // namespace kscope::detail

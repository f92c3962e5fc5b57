#pragma once
// Settings::metrics against what a backend measures: the duration backends measure exactly one
// metric of their own, so any other name is an error before anything runs.
#include <string>
#include <vector>

namespace kscope::detail {

// Throws ConfigError unless every requested metric is one of `measured` (by the backend named
// `backend`). An empty request asks for the backend's own metrics.
void check_requested_metrics(const std::vector<std::string>& requested, const std::vector<std::string>& measured,
                             const std::string& backend);

}  // namespace kscope::detail

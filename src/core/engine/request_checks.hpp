#pragma once
// A profiling request checked before any session measures it, once per call: the sweep, the
// settings and the body, then the metrics the backend measures against those asked for. A Session
// trusts what passed these checks.
#include <vector>

#include "kscope/measurement_backend.hpp"
#include "kscope/profile.hpp"

namespace kscope::detail {

// ConfigError for a bad sweep, settings or body, before anything touches the GPU; the sweep's
// configs otherwise.
std::vector<Config> check_request(const Sweep& sweep, const Settings& settings, const Body& body);
// ConfigError unless `backend` measures every metric the settings ask for; made once per call,
// by whoever made or was given the backend (profile() checks a duration backend's before making it).
void check_backend_measures(const Settings& settings, const MeasurementBackend& backend);

// What a session over `backend` records: the backend's metrics, then the energy metrics asked for,
// in the order asked.
std::vector<MetricSpec> session_metrics(const MeasurementBackend& backend, const Settings& settings);

}  // namespace kscope::detail

#pragma once
// The entry point: run `body` over every config of `sweep` and return the measurements.
#include <memory>

#include "kscope/config.hpp"
#include "kscope/results.hpp"
#include "kscope/settings.hpp"
#include "kscope/sweep.hpp"

namespace kscope {

class MeasurementBackend;

// Runs settings.warmup_runs + settings.runs calls of body per config on the selected real backend.
// Throws ConfigError for a bad sweep or settings before anything runs, BackendError when the
// backend cannot work here, and SweepError (with the partial results) when a config fails.
Results profile(const Sweep& sweep, const Settings& settings, const Body& body);

// The same with a backend supplied by the caller: kscope::testing::SimulatedBackend (kscope/testing.hpp,
// target kscope::testing) for tests of a sweep without a GPU, or an extension's backend.
Results profile_with_backend(const Sweep& sweep, const Settings& settings, const Body& body,
                             MeasurementBackend& backend);

}  // namespace kscope

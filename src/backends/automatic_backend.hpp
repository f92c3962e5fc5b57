#pragma once
// Backend::automatic: the counters where this process may read them, otherwise kernel durations,
// with a warning; the rows' Backend column names the one used.
#include <exception>
#include <memory>

#include "kscope/measurement_backend.hpp"

namespace kscope {

// What to measure with when the counters backend failed with `error`: another profiler owns CUPTI
// (events), counters are not permitted or supported here (cupti). A wrong metric name
// (ConfigError), an unusable GPU (CudaError) or a kscope bug (InternalError) is not a reason to
// measure something else: none, and the error is raised.
enum class AutomaticFallback { none, cupti, events };
AutomaticFallback automatic_fallback(std::exception_ptr error);

std::unique_ptr<MeasurementBackend> make_automatic_backend(const Settings& settings);

}  // namespace kscope

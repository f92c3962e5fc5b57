#include "backends/backend_factory.hpp"

#include "backends/counters/counters_backend.hpp"
#include "backends/cupti/cupti_backend.hpp"
#include "backends/events/events_backend.hpp"
#include "backends/ncu/ncu_profile.hpp"
#include "kscope/errors.hpp"
#include "kscope/profile.hpp"

namespace kscope {

std::unique_ptr<MeasurementBackend> make_backend(const Settings& settings) {
  switch (settings.backend) {
    case Backend::cupti:
      return std::make_unique<CuptiBackend>(settings.device);
    case Backend::events:
      return std::make_unique<EventsBackend>(settings.device);
    case Backend::counters:
    case Backend::automatic:
      return make_counters_backend(settings);
    case Backend::ncu:
      throw BackendError("Backend::ncu measures in a child process under Nsight Compute and is reached only "
                         "through kscope::profile(), not as an in-process MeasurementBackend");
  }
  throw ConfigError("unknown Settings::backend value " +
                    std::to_string(static_cast<int>(settings.backend)));
}

Results profile(const Sweep& sweep, const Settings& settings, const Body& body) {
  // A bad sweep or settings is reported before the backend touches the GPU.
  sweep.validate();
  settings.validate();
  if (auto results = ncu::route_profile(sweep, settings, body)) return std::move(*results);
  auto backend = make_backend(settings);
  return profile_with_backend(sweep, settings, body, *backend);
}

}  // namespace kscope

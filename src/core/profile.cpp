// profile(): checks the request, holds the process's one session, and carries the call out as the
// backend registry says: on a backend's route (e.g. Nsight Compute re-running the program), else
// on the chosen backend in this process. profile_with_backend(): the same on the caller's backend.
#include "kscope/profile.hpp"

#include <atomic>

#include "core/log.hpp"
#include "core/metric_request.hpp"
#include "core/request_checks.hpp"
#include "core/session.hpp"
#include "core/session_guard.hpp"
#include "core/sharding.hpp"
#include "kscope/backend_registry.hpp"
#include "kscope/errors.hpp"

namespace kscope {

Results profile(const Sweep& sweep, const Settings& requested, const Body& body) {
  detail::LogScope log(requested.verbosity);
  const Settings settings = detail::resolve_launch(requested);
  std::vector<Config> configs = detail::check_request(sweep, settings, body);
  const BackendDefinition& chosen = definition(chosen_backend(settings));
  // A duration backend measures one metric of its own: anything else is refused before the GPU is touched.
  if (chosen.capabilities.measures_duration)
    detail::check_requested_metrics(detail::backend_metrics(settings.metrics), chosen.default_metrics, chosen.name);
  detail::SessionGuard guard;
  static std::atomic<std::size_t> calls{0};
  const std::size_t call = ++calls;
  for (const Backend b : registered_backends())
    if (const auto& route = definition(b).route)
      if (std::optional<Results> routed = route(sweep, settings, body, call)) return std::move(*routed);
  if (!chosen.make)
    throw InternalError("backend '" + chosen.name + "' has no factory and its route left a call naming it to this " +
                        "process (a bug of its definition in the backend registry)");
  const auto backend = chosen.make(settings);
  if (!chosen.capabilities.measures_duration) detail::check_backend_measures(settings, *backend);
  return detail::Session(std::move(configs), settings, body, *backend).run();
}

// profile() without the backend registry's route and factory: the caller's backend measures.
Results profile_with_backend(const Sweep& sweep, const Settings& settings, const Body& body,
                             MeasurementBackend& backend) {
  detail::LogScope log(settings.verbosity);
  const Settings launched = detail::resolve_launch(settings);
  std::vector<Config> configs = detail::check_request(sweep, launched, body);
  detail::SessionGuard guard;
  detail::check_backend_measures(launched, backend);
  return detail::Session(std::move(configs), launched, body, backend).run();
}

}  // namespace kscope

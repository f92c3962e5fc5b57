// profile(): through the entry (core/engine/entry.hpp), carried out as the backend registry says: on a
// backend's route (e.g. Nsight Compute re-running the program), else on the chosen backend in this
// process. profile_with_backend(): the same on the caller's backend.
#include "kscope/profile.hpp"

#include <atomic>

#include "core/engine/entry.hpp"
#include "core/engine/session.hpp"
#include "kscope/backend_registry.hpp"

namespace kscope {

Results profile(const Sweep& sweep, const Settings& requested, const Body& body) {
  detail::EntryCall call(detail::Entry::profile, sweep, requested, body);
  const BackendDefinition& chosen = call.chosen();
  call.hold_session();
  static std::atomic<std::size_t> calls{0};
  const std::size_t call_number = ++calls;
  for (const Backend b : registered_backends())
    if (const auto& route = definition(b).route)
      if (std::optional<Results> routed = route(sweep, call.settings(), body, call_number)) return std::move(*routed);
  const auto backend = call.make(chosen);
  call.start(*backend);
  return detail::Session(call.take_configs(), call.settings(), body, *backend).run();
}

// profile() without the backend registry's route and factory: the caller's backend measures.
Results profile_with_backend(const Sweep& sweep, const Settings& settings, const Body& body,
                             MeasurementBackend& backend) {
  detail::EntryCall call(detail::Entry::profile, sweep, settings, body);
  call.start(backend);
  return detail::Session(call.take_configs(), call.settings(), body, backend).run();
}

}  // namespace kscope

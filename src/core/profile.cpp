// profile(): checks the request, holds the process's one session, and carries the call out on the
// route the backend factory gives (in this process unless, e.g., Nsight Compute must re-run it).
#include "kscope/profile.hpp"

#include <atomic>

#include "core/backend_factory.hpp"
#include "core/log.hpp"
#include "core/metric_request.hpp"
#include "core/session.hpp"
#include "core/session_guard.hpp"
#include "core/sharding.hpp"
#include "kscope/metrics.hpp"

namespace kscope {

Results profile(const Sweep& sweep, const Settings& requested, const Body& body) {
  const Settings settings = detail::resolve_shard(requested);
  detail::check_request(sweep, settings, body);
  // The duration backends measure one metric of their own: anything else is refused before the GPU is touched.
  if (const Backend backend = chosen_backend(settings); backend == Backend::cupti || backend == Backend::events)
    detail::check_requested_metrics(detail::backend_metrics(settings.metrics), default_metrics(backend),
                                    to_string(backend));
  detail::LogScope log(settings.verbosity);
  detail::SessionGuard guard;
  static std::atomic<std::size_t> calls{0};
  detail::BackendFactory& factory = detail::backend_factory();
  if (auto route = factory.route(sweep, settings, ++calls)) return route->profile(sweep, settings, body);
  const auto backend = factory.make(settings);
  return detail::Session(sweep.configs(), settings, body, *backend).run();
}

}  // namespace kscope

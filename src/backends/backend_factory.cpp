// The backends of the CUDA build, and the route of each profile() call: in this process, or
// through Nsight Compute (backends/ncu/ncu_routes.hpp).
#include "core/backend_factory.hpp"

#include "backends/automatic_backend.hpp"
#include "backends/counters/counters_backend.hpp"
#include "backends/cupti/cupti_backend.hpp"
#include "backends/events/events_backend.hpp"
#include "backends/ncu/ncu_routes.hpp"
#include "kscope/errors.hpp"

namespace kscope {
namespace {

class CudaBackendFactory final : public detail::BackendFactory {
 public:
  std::unique_ptr<detail::Route> route(const Sweep& sweep, const Settings& settings, std::size_t call) override {
    return ncu::route(sweep, settings, call);
  }

  std::unique_ptr<MeasurementBackend> make(const Settings& settings) override {
    // Backend::from_metrics becomes the backend the metrics ask for; an explicit one stays.
    switch (chosen_backend(settings)) {
      case Backend::cupti: return std::make_unique<CuptiBackend>(settings.device);
      case Backend::events: return std::make_unique<EventsBackend>(settings.device);
      case Backend::counters: return std::make_unique<CountersBackend>(settings);
      case Backend::automatic: return make_automatic_backend(settings);
      case Backend::ncu: break;  // routed before: ncu::route always takes it
      case Backend::from_metrics: break;  // never chosen
    }
    throw InternalError("no in-process backend for backend " + to_string(settings.backend) +
                        " (kscope bug: please report it with this message)");
  }
};

}  // namespace

detail::BackendFactory& detail::backend_factory() {
  static CudaBackendFactory factory;
  return factory;
}

}  // namespace kscope

#include "backends/automatic_backend.hpp"

#include "backends/counters/counters_backend.hpp"
#include "backends/cupti/cupti_backend.hpp"
#include "backends/cupti_subscriber.hpp"
#include "backends/events/events_backend.hpp"
#include "core/model/caller_language.hpp"
#include "core/model/exception_message.hpp"
#include "core/model/log.hpp"
#include "kscope/backend_registry.hpp"
#include "kscope/errors.hpp"

namespace kscope {

AutomaticFallback automatic_fallback(std::exception_ptr error) {
  try {
    std::rethrow_exception(error);
  } catch (const cupti::OtherProfilerError&) {
    return AutomaticFallback::events;
  } catch (const CudaError&) {
    return AutomaticFallback::none;
  } catch (const BackendError&) {
    return AutomaticFallback::cupti;
  } catch (...) {
    return AutomaticFallback::none;
  }
}

std::unique_ptr<MeasurementBackend> make_automatic_backend(const Settings& settings) {
  try {
    auto counters = std::make_unique<CountersBackend>(settings);
    // The probe: everything a session needs, including the range profiler on the context.
    detail::LogScope quiet(Verbosity::quiet);
    counters->begin_session(settings);
    counters->end_session();
    return counters;
  } catch (...) {
    const std::exception_ptr error = std::current_exception();
    const AutomaticFallback fallback = automatic_fallback(error);
    if (fallback == AutomaticFallback::none) throw;
    const Backend timing = fallback == AutomaticFallback::events ? Backend::events : Backend::cupti;
    detail::log_warning(detail::spell("Backend::automatic", "backend='auto'") +
                        ": hardware counters are not available here, so kernel durations are measured with " +
                        detail::spell("Backend::" + to_string(timing), "backend='" + to_string(timing) + "'") +
                        " (metric " + default_metrics(timing).front() + ")" +
                        (settings.metrics.empty() ? "" : " instead of the requested metrics") +
                        ". Every row's Backend column says so. Reason: " + detail::exception_message(error));
    if (fallback == AutomaticFallback::events) return std::make_unique<EventsBackend>(settings.device);
    return std::make_unique<CuptiBackend>(settings.device);
  }
}

}  // namespace kscope

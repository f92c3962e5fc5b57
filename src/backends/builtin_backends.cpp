// kscope's own backends: one definition each in the backend registry (kscope/backend_registry.hpp),
// registered as the program starts. Everything that names, checks or chooses a backend reads them.
// Built without CUDA, the GPU backends keep their names, metrics and checks, and their factories
// say why nothing can measure.
#include <memory>

#include "core/model/backend_choice.hpp"
#include "core/model/caller_language.hpp"
#include "core/decisions/host_tensor_checks.hpp"
#include "backends/availability.hpp"
#include "kscope/backend_registry.hpp"
#include "kscope/errors.hpp"
#include "kscope/metrics.hpp"

#if KSCOPE_WITH_CUDA
#include "backends/automatic_backend.hpp"
#include "backends/counters/counters_backend.hpp"
#include "backends/cupti/cupti_backend.hpp"
#include "backends/events/events_backend.hpp"
#include "backends/ncu/ncu_routes.hpp"
#include "backends/pcsampling/pc_sampling_backend.hpp"
#include "device/gpu_tensor_checks.hpp"
// The part of a definition that needs CUDA, and what stands in for it in a build without.
#define KSCOPE_IF_CUDA(with_cuda, without_cuda) with_cuda
#else
#define KSCOPE_IF_CUDA(with_cuda, without_cuda) without_cuda
#endif

// Named by the link options of kscope::kscope (CMakeLists.txt), so that every program linking it
// keeps this file, and so its backends, though no code refers to it.
extern "C" const char kscope_builtin_backends = 0;

namespace kscope {
namespace {

[[maybe_unused]] std::unique_ptr<MeasurementBackend> built_without_cuda(const Settings&) {
  throw BackendError(
      "kscope was built without CUDA (KSCOPE_ENABLE_CUDA=OFF), so it has no measurement backend: "
      "install the CUDA toolkit (nvcc, CUPTI) and reconfigure with -DKSCOPE_ENABLE_CUDA=ON");
}

template <class Checks>
std::unique_ptr<TensorChecks> checks_of() {
  return std::make_unique<Checks>();
}

// Nsight Compute measures in a process it starts: nothing streams back as the sweep goes, and
// nothing the body's process computes besides its kernels comes back.
void check_ncu(const Settings& s) {
  using detail::backend_choice;
  using detail::option;
  if (s.resume)
    throw ConfigError(option("resume") + " does not work with " + backend_choice(Backend::ncu) +
                      ": Nsight Compute measures the whole sweep in one re-run of the program, so there is nothing "
                      "streamed to continue from; run it again with " + option("overwrite") +
                      detail::spell(" = true", "=True") + " instead of " + option("resume"));
  if (s.shard && s.shard->count > 1)
    throw ConfigError(option("shard") + " does not work with " + backend_choice(Backend::ncu) +
                      ": Nsight Compute re-runs the whole program for the sweep. Shard with " +
                      backend_choice(Backend::counters) + " (the same metrics, measured in this process)");
  if (!s.info_collectors.empty())
    throw ConfigError(option("info_collectors") + " cannot be used with " + backend_choice(Backend::ncu) +
                      ": the body runs in a process that Nsight Compute starts, whose collector values do not come "
                      "back. Use " + backend_choice(Backend::counters) +
                      " (the same metric names, measured in this process), or no collectors");
}

// PC sampling counts samples of whole regions' kernels: no metrics of its own to choose, no range replay.
void check_pcsampling(const Settings& s) {
  using detail::option;
  if (!s.metrics.empty() && !(s.metrics.size() == 1 && s.metrics.front() == kPcSamples))
    throw ConfigError(option("metrics") + " cannot be used with the pcsampling backend: it measures " + kPcSamples +
                      " (the program-counter samples of each kernel). Measure hardware metrics with the counters "
                      "backend, in a profile of their own");
}

[[maybe_unused]] const bool registered = [] {
  const std::vector<std::string> cupti_duration{kCuptiKernelDuration};
  register_backend({
      .name = std::string(Backend::from_metrics.name()),
      .summary = "chosen from the metrics: cupti without any, a duration backend for its own metric, counters for "
                 "Nsight Compute names",
      .default_metrics = cupti_duration,
  });
  register_backend({
      .name = std::string(Backend::cupti.name()),
      .python_name = "cupti",
      .summary = "per-kernel durations from CUPTI's activity records",
      .default_metrics = cupti_duration,
      .capabilities = {.measures_duration = true, .energy = true, .observes_calls = true},
      .make = KSCOPE_IF_CUDA([](const Settings& s) { return std::make_unique<CuptiBackend>(s.device); },
                             built_without_cuda),
      .tensor_checks = KSCOPE_IF_CUDA(checks_of<device::GpuTensorChecks>, nullptr),
      .assess = doctor::cupti_availability,
  });
  register_backend({
      .name = std::string(Backend::events.name()),
      .python_name = "events",
      .summary = "region durations from CUDA events, without kernel names",
      .default_metrics = {kEventsRegionDuration},
      .capabilities = {.measures_duration = true, .energy = true, .replay_modes = false},
      .make = KSCOPE_IF_CUDA([](const Settings& s) { return std::make_unique<EventsBackend>(s.device); },
                             built_without_cuda),
      .assess = doctor::events_availability,
  });
  register_backend({
      .name = std::string(Backend::counters.name()),
      .python_name = "counters",
      .summary = "hardware metrics named as in Nsight Compute, in process; metrics default to the Speed-of-Light "
                 "preset",
      .default_metrics = sol_metrics(),
      .make = KSCOPE_IF_CUDA([](const Settings& s) { return std::make_unique<CountersBackend>(s); },
                             built_without_cuda),
      .assess = doctor::counters_availability,
  });
  register_backend({
      .name = std::string(Backend::automatic.name()),
      .python_name = "auto",
      .summary = "counters where permitted, else a duration backend, with a warning",
      .default_metrics = sol_metrics(),
      .make = KSCOPE_IF_CUDA(make_automatic_backend, built_without_cuda),
      .assess = doctor::automatic_availability,
  });
  register_backend({
      .name = std::string(Backend::ncu.name()),
      .python_name = "ncu",
      .summary = "re-runs the program under Nsight Compute's CLI and reads its report",
      .default_metrics = {kGpuTimeDuration},
      .check = check_ncu,
      .route = KSCOPE_IF_CUDA(ncu::route, nullptr),
      .make = KSCOPE_IF_CUDA(nullptr, built_without_cuda),
      .assess = doctor::ncu_availability,
  });
  register_backend({
      .name = std::string(Backend::simulated.name()),
      .summary = "kscope/testing.hpp's simulated GPU for tests: kernels of given durations, nothing measured",
      .tensor_checks = checks_of<detail::HostTensorChecks>,  // its device memory is the host's
  });
  register_backend({
      .name = "pcsampling",
      .python_name = "pcsampling",
      .summary = "program-counter samples of each kernel (CUPTI PC sampling); kscope.analyze.lines gives them per "
                 "source line and stall reason",
      .default_metrics = {kPcSamples},
      .capabilities = {.replay_modes = false},
      .check = check_pcsampling,
      .make = KSCOPE_IF_CUDA([](const Settings& s) { return std::make_unique<PcSamplingBackend>(s); },
                             built_without_cuda),
      .assess = doctor::pcsampling_availability,
  });
  return true;
}();

}  // namespace
}  // namespace kscope

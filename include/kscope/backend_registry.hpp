#pragma once
// The backend registry: one BackendDefinition per backend, and everything that names, checks or
// chooses a backend reads it: Settings::backend's names and checks, chosen_backend(), how profile()
// measures, results files, compare(), kscope doctor's rows and Python's backend= choices.
// kscope's own backends are registered by its library (kscope::kscope); a program adds one with
// register_backend() and selects it with Settings::backend = Backend::named("its name")
// (docs/architecture.md, "How to add a backend").
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "kscope/backend.hpp"
#include "kscope/doctor.hpp"
#include "kscope/measurement_backend.hpp"
#include "kscope/results.hpp"
#include "kscope/settings.hpp"
#include "kscope/sweep.hpp"
#include "kscope/tensor_checks.hpp"

namespace kscope {

// What the engine asks of a backend besides making it.
struct BackendCapabilities {
  // It measures one duration of its own (its default_metrics), alone: Backend::from_metrics
  // chooses it for that metric, and profile() refuses other metrics before measuring.
  bool measures_duration = false;
  // The energy metrics (kscope/energy.hpp) may be measured beside it: one pass per run, no counters.
  bool energy = false;
  // Settings::replay_mode changes what it measures, so compare() refuses results measured in
  // different modes; false for a backend that always measures whole regions.
  bool replay_modes = true;
  // It sees all the GPU work a call causes, on every stream and from every thread
  // (MeasurementBackend::call_observer): evaluate() chooses it.
  bool observes_calls = false;
};

// A backend as the registry knows it: its names, what it measures and can do, and how it is made.
struct BackendDefinition {
  std::string name{};         // Settings::backend (Backend::named), the Backend column, results files
  std::string python_name{};  // Python's backend= choice ("auto" for automatic); empty: not one
  std::string summary{};      // what it measures, in a few words (Python's help)
  std::vector<std::string> default_metrics{};  // what it measures when Settings::metrics is empty
  BackendCapabilities capabilities{};  // what it can measure and honour
  // Refuses settings it cannot honour with a ConfigError naming the fix; Settings::validate calls
  // it for the backend the settings choose. Empty: any valid settings will do.
  std::function<void(const Settings& settings)> check{};
  // Called for every profile() call, whatever backend it names, before anything is measured in
  // this process: the Results of a call this backend carries out another way (Nsight Compute's
  // re-run of the program), or nullopt. `call` counts the process's profile() calls from 1.
  std::function<std::optional<Results>(const Sweep& sweep, const Settings& settings, const Body& body,
                                       std::size_t call)>
      route{};
  // The backend that measures a profile() call in this process; throws BackendError saying why it
  // cannot work here. Empty when its route takes every call that names it, or when
  // Settings::backend cannot choose it (from_metrics chooses another; the simulated backend is
  // given to profile_with_backend).
  std::function<std::unique_ptr<MeasurementBackend>(const Settings& settings)> make{};
  // evaluate()'s reads of tensors in the memory of the device this backend measures (kscope's GPU
  // checks, or the host's reads for a simulated device whose memory is the host's). Empty: it cannot
  // evaluate; one that can also observes calls (MeasurementBackend::call_observer).
  std::function<std::unique_ptr<TensorChecks>()> tensor_checks{};
  // kscope doctor's verdict on this machine and process (the doctor fills in its `backend`);
  // empty: the doctor does not list it.
  std::function<BackendAvailability(const DoctorFacts& facts)> assess{};
};

// Adds a backend; throws ConfigError when its name (or Python name) is empty or taken. Register
// before the calls that use it; a definition is never removed.
Backend register_backend(BackendDefinition definition);

// Every registered backend, in the order registered (kscope's own in the order of their table).
std::vector<Backend> registered_backends();

// A registered backend's definition. Throws InternalError for one that was never registered (in a
// program that does not link kscope::kscope, whose library registers kscope's own).
const BackendDefinition& definition(Backend backend);

// What a backend measures when Settings::metrics is empty (from_metrics: cupti's duration, the
// backend it then chooses).
std::vector<std::string> default_metrics(Backend backend);

}  // namespace kscope

// Settings::validate: each field's own check (the settings table's rows), then the checks across
// fields, the backend's, and the sampling plan's and the thermal guard's, whose constructors check
// their fields.
#include <algorithm>

#include "base/text.hpp"
#include "core/control/thermal_guard.hpp"
#include "core/engine/sampling_plan.hpp"
#include "core/model/backend_choice.hpp"
#include "core/model/caller_language.hpp"
#include "core/engine/info_collection.hpp"
#include "core/model/metric_request.hpp"
#include "core/model/settings_table.hpp"
#include "core/model/suggest.hpp"
#include "kscope/backend_registry.hpp"
#include "kscope/energy.hpp"
#include "kscope/errors.hpp"
#include "kscope/settings.hpp"

namespace kscope {

void Settings::validate() const {
  using detail::option;
  using detail::spell;
  // Each field's own check (its row of the settings table), then the checks across fields.
  for (const auto& field : detail::settings_fields())
    if (field.check) field.check(*this);
  if (resume && output_prefix.empty())
    throw ConfigError(option("resume") + " continues the sweep streamed under " + option("output_prefix") +
                      ", which is not set: give the same " + option("output_prefix") + " as the sweep to continue");
  if (resume && overwrite)
    throw ConfigError(option("resume") + " continues the sweep under " + option("output_prefix") + " and " +
                      option("overwrite") + " replaces it: set one of them");
  detail::check_energy_spelling(metrics);
  const Backend measuring = chosen_backend(*this);  // also checks that the metrics can go together
  const BackendDefinition& measured_by = definition(measuring);
  if (!measured_by.make && !measured_by.route)
    throw ConfigError(option("backend") + " is '" + to_string(measuring) + "', which profile() cannot measure with: " +
                      "its definition in the backend registry has no factory (kscope's simulated backend is given to "
                      "profile_with_backend instead)");
  if (measured_by.check) measured_by.check(*this);
  if (!detail::energy_metrics_requested(metrics).empty()) {
    if (!measured_by.capabilities.energy) {
      std::string energy_backends;
      for (const Backend b : registered_backends())
        if (definition(b).capabilities.energy)
          energy_backends += (energy_backends.empty() ? "" : " or ") + detail::backend_choice(b);
      throw ConfigError("Invalid value " + detail::python_list(metrics) + " for 'metrics': the energy metrics are "
                        "measured beside kernel durations, over windows of runs repeated back to back, with " +
                        energy_backends + ", not with " + detail::backend_choice(measuring) +
                        " (whose replay passes and counters change what a run costs). Measure them in two calls");
    }
    if (!(energy_window_s > 0) || energy_window_s > 3600)
      throw ConfigError(option("energy_window_s") + " is " + detail::number_text(energy_window_s) +
                        ": it must be a duration in seconds above 0 and at most 3600 (1 s by default: the GPU's energy "
                        "counter updates about every 0.1 s)");
  }
  if (!ncu_sections.empty() && measuring != Backend::ncu)
    throw ConfigError(option("ncu_sections") + " is set but the backend is " + to_string(measuring) +
                      ": sections are Nsight Compute's; use " + detail::backend_choice(Backend::ncu) + ", or " +
                      detail::backend_choice(Backend::counters) + " with the metrics the section would show");
  for (const auto& s : ncu_sections)
    if (s.empty() || s.find_first_of(" \t\n") != std::string::npos)
      throw ConfigError(option("ncu_sections") + " has '" + s + "', not a section identifier: list them with "
                        "'ncu --list-sections' (e.g. SpeedOfLight, MemoryWorkloadAnalysis)");
  if (combine_kernel_metrics && replay_mode == ReplayMode::range)
    throw ConfigError(option("combine_kernel_metrics") + " is set, but " + option("replay_mode") +
                      spell(" = ReplayMode::range", "='range'") +
                      " measures each region as one result (the span of its kernels), so it would combine nothing: "
                      "drop one of the two (" + option("replay_mode") + spell(" = ReplayMode::kernel", "='kernel'") +
                      " measures each kernel and combines their values)");
  detail::check_info_collectors(info_collectors);

  // Their constructors check the thermal and adaptive-sampling fields.
  detail::SamplingPlan(*this, 0.0);
  detail::ThermalGuard(*this, {}, {}, {});
}

}  // namespace kscope

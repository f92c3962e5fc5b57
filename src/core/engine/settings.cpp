#include "kscope/settings.hpp"

#include <algorithm>

#include "base/text.hpp"
#include "core/model/backend_choice.hpp"
#include "core/model/caller_language.hpp"
#include "core/model/info_collection.hpp"
#include "core/model/metric_request.hpp"
#include "core/engine/sampling_plan.hpp"
#include "core/model/settings_table.hpp"
#include "core/model/suggest.hpp"
#include "core/control/thermal_guard.hpp"
#include "kscope/backend_registry.hpp"
#include "kscope/detail/enum_names.hpp"
#include "kscope/energy.hpp"
#include "kscope/errors.hpp"
#include "kscope/metrics.hpp"

namespace kscope {

std::string to_string(CacheControl c) { return detail::enum_name(c); }

std::string to_string(ClockControl c) { return detail::enum_name(c); }

namespace {

// The measurement modes: what each preset sets, and its name.
struct Mode {
  Preset preset;
  CacheControl cache;
  ClockControl clock;
  const char* name;
};
constexpr Mode kModes[] = {
    {Preset::default_profiling, CacheControl::all, ClockControl::none, "default"},
    {Preset::strict, CacheControl::all, ClockControl::base, "strict"},
    {Preset::continuous, CacheControl::none, ClockControl::none, "continuous"},
};

}  // namespace

std::string mode_name(CacheControl cache, ClockControl clock) {
  for (const Mode& mode : kModes)
    if (mode.cache == cache && mode.clock == clock) return mode.name;
  return "custom";
}

namespace detail {

void check_requested_metrics(const std::vector<std::string>& requested, const std::vector<std::string>& measured,
                             const std::string& backend) {
  for (const auto& m : requested) {
    if (std::find(measured.begin(), measured.end(), m) != measured.end()) continue;
    const std::string ncu_note = m == kGpuTimeDuration
                                     ? " Nsight Compute's " + m + " is measured under ncu's kernel replay and is not "
                                       "the same quantity."
                                     : "";
    throw ConfigError("Invalid value " + python_list(requested) + " for 'metrics': the " + backend +
                      " backend measures only " + quoted_list(measured) + "." + ncu_note +
                      " For hardware-counter metrics use " + backend_choice(Backend::counters) + " or " +
                      backend_choice(Backend::from_metrics) +
                      " (the default, which chooses from the metrics); otherwise drop " + option("metrics") +
                      " or set it to " + python_list(measured));
  }
}

std::vector<std::string> backend_metrics(const std::vector<std::string>& requested) {
  std::vector<std::string> out;
  for (const auto& m : requested)
    if (!is_energy_metric(m)) out.push_back(m);
  return out;
}

std::vector<std::string> energy_metrics_requested(const std::vector<std::string>& requested) {
  std::vector<std::string> out;
  for (const auto& m : requested)
    if (is_energy_metric(m) && std::find(out.begin(), out.end(), m) == out.end()) out.push_back(m);
  return out;
}

// A metric named like an energy metric that is none of them is a misspelling, not a counter for
// the counters backend to look up.
void check_energy_spelling(const std::vector<std::string>& requested) {
  std::vector<std::string> energy;
  for (const auto& spec : energy_metrics()) energy.push_back(spec.name);
  for (const auto& m : requested) {
    if (is_energy_metric(m)) continue;
    const std::string closest = closest_names(m, energy, 1).front();
    if (m.rfind("nvml__", 0) == 0 || edit_distance(m, closest) <= 3)
      throw ConfigError("'" + cut(m) + "' in " + option("metrics") + " is not one of the energy metrics (" +
                        quoted_list(energy) + "): did you mean '" + closest + "'?");
  }
}

}  // namespace detail

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

Settings& Settings::apply(Preset preset) {
  for (const Mode& mode : kModes)
    if (mode.preset == preset) {
      cache_control = mode.cache;
      clock_control = mode.clock;
      return *this;
    }
  throw InternalError("a preset without a mode (" + std::to_string(static_cast<int>(preset)) +
                      "): kscope bug, please report it");
}

std::string to_string(ReplayMode r) { return detail::enum_name(r); }

double MeasuredValues::operator[](const std::string& metric) const {
  auto it = std::find(names_->begin(), names_->end(), metric);
  if (it == names_->end()) {
    throw ConfigError("derive_metric asked for metric '" + metric + "', which this backend does not measure; measured: " +
                      detail::quoted_list(*names_));
  }
  return (*values_)[static_cast<std::size_t>(it - names_->begin())];
}

}  // namespace kscope

#include "kscope/settings.hpp"

#include <algorithm>

#include "core/sampling_plan.hpp"
#include "core/suggest.hpp"
#include "core/thermal_guard.hpp"
#include "kscope/errors.hpp"

namespace kscope {

std::string to_string(Backend b) {
  switch (b) {
    case Backend::cupti: return "cupti";
    case Backend::events: return "events";
    case Backend::counters: return "counters";
    case Backend::automatic: return "automatic";
    case Backend::ncu: return "ncu";
  }
  return "?";
}

std::string to_string(CacheControl c) { return c == CacheControl::all ? "all" : "none"; }

std::string to_string(ClockControl c) { return c == ClockControl::none ? "none" : "base"; }

std::string mode_name(CacheControl cache, ClockControl clock) {
  if (clock == ClockControl::none) return cache == CacheControl::all ? "default" : "continuous";
  return cache == CacheControl::all ? "strict" : "custom";
}

void Settings::validate() const {
  if (runs == 0) throw ConfigError("Settings::runs is 0; at least one recorded run per config is needed");
  if (!(stable_rsd_pct > 0))
    throw ConfigError("Settings::stable_rsd_pct must be a positive percentage (the default is 2.0)");
  if (!ncu_sections.empty() && backend != Backend::ncu)
    throw ConfigError("Settings::ncu_sections is set but the backend is " + to_string(backend) +
                      ": sections are Nsight Compute's; use Backend::ncu, or Backend::counters with the metrics "
                      "the section would show");
  for (const auto& s : ncu_sections)
    if (s.empty() || s.find_first_of(" \t\n") != std::string::npos)
      throw ConfigError("Settings::ncu_sections has '" + s + "', not a section identifier: list them with "
                        "'ncu --list-sections' (e.g. SpeedOfLight, MemoryWorkloadAnalysis)");
  for (const auto& k : ignore_kernel_list)
    if (k.empty()) throw ConfigError("Settings::ignore_kernel_list contains an empty kernel name");
  // Their constructors check the thermal and adaptive-sampling fields.
  detail::SamplingPlan(*this, 0.0);
  detail::ThermalGuard(*this, {}, {}, {});
}

Settings& Settings::apply(Preset preset) {
  cache_control = preset == Preset::continuous ? CacheControl::none : CacheControl::all;
  clock_control = preset == Preset::strict ? ClockControl::base : ClockControl::none;
  return *this;
}

std::string to_string(ReplayMode r) { return r == ReplayMode::kernel ? "kernel" : "range"; }

double MeasuredValues::operator[](const std::string& metric) const {
  auto it = std::find(names_->begin(), names_->end(), metric);
  if (it == names_->end()) {
    throw ConfigError("derive_metric asked for metric '" + metric + "', which this backend does not measure; measured: " +
                      detail::quoted_list(*names_));
  }
  return (*values_)[static_cast<std::size_t>(it - names_->begin())];
}

}  // namespace kscope

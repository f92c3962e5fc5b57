// Settings (kscope/settings.hpp): its enumerations' names, its presets, the metric names it holds, and
// MeasuredValues. Settings::validate, which needs the sampling plan's and the thermal guard's own
// checks, is the engine's (core/engine/settings_validation.cpp).
#include "kscope/settings.hpp"

#include <algorithm>

#include "base/text.hpp"
#include "core/model/backend_choice.hpp"
#include "core/model/caller_language.hpp"
#include "core/model/metric_request.hpp"
#include "core/model/suggest.hpp"
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

// A misspelling, not a counter for the counters backend to look up.
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

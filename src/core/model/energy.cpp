#include "kscope/energy.hpp"

#include <algorithm>
#include <cmath>

#include "core/model/caller_language.hpp"
#include "core/model/suggest.hpp"
#include "kscope/errors.hpp"

namespace kscope {

const std::vector<MetricSpec>& energy_metrics() {
  static const std::vector<MetricSpec> specs{
      {kEnergyPerRun, "J",
       "GPU energy per run: NVML's total-energy counter over a window of back-to-back runs, read at the counter's "
       "updates, less the idle margins around the runs and the L2 flushes (measured as their own window), divided "
       "by the runs"},
      {kAveragePower, "W",
       "energy per run over the time one run takes in its window (the GPU's mean power while the runs ran, the "
       "flushes left out)"},
      {kEnergyAboveIdle, "J",
       "energy per run less the idle power measured in the session times the time one run takes in its window"},
  };
  return specs;
}

bool is_energy_metric(const std::string& name) {
  const auto& specs = energy_metrics();
  return std::any_of(specs.begin(), specs.end(), [&](const MetricSpec& m) { return m.name == name; });
}

std::vector<DerivedValue> energy_efficiency(double energy_per_run_j, double flop, double bytes) {
  std::vector<DerivedValue> out;
  if (flop > 0) out.push_back({"flop_per_joule", flop / energy_per_run_j, "FLOP/J"});
  if (bytes > 0) out.push_back({"bytes_per_joule", bytes / energy_per_run_j, "B/J"});
  return out;
}

std::vector<DerivedValue> energy_efficiency(const MeasuredValues& measured, double flop, double bytes) {
  const auto& names = measured.names();
  if (std::find(names.begin(), names.end(), kEnergyPerRun) == names.end())
    throw ConfigError(std::string("FLOP/J and bytes/J are computed from ") + kEnergyPerRun +
                      ", which is not measured here (measured: " + detail::quoted_list(names) + "): add it to " +
                      detail::option("metrics"));
  return energy_efficiency(measured[kEnergyPerRun], flop, bytes);
}

}  // namespace kscope

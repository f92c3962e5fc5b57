#pragma once
// Energy per run from the GPU's total-energy counter (NVML), measured beside the durations of the
// same runs. Ask for it by name in Settings::metrics, alone or with a duration backend's metric:
//
//   s.metrics = {kscope::kEnergyPerRun, kscope::kAveragePower, kscope::kEnergyAboveIdle};
//
// The counter updates about every 100 ms (H200), far slower than a kernel, so each sample is a
// window: the body repeated back to back for at least Settings::energy_window_s, the energy read
// at counter updates around it and divided by the repetitions. docs/energy.md says what the
// numbers include (the whole GPU: the body's other work and other processes too) and what is
// subtracted (the L2 flushes, measured as their own window; idle power, measured in the session).
#include <string>
#include <vector>

#include "kscope/measurement_backend.hpp"
#include "kscope/settings.hpp"

namespace kscope {

inline constexpr const char* kEnergyPerRun = "nvml__energy_per_run";        // J per run
inline constexpr const char* kAveragePower = "nvml__average_power";         // W while the runs ran
inline constexpr const char* kEnergyAboveIdle = "nvml__energy_above_idle";  // J per run above idle

// The three energy metrics, in the order above, with units and descriptions.
const std::vector<MetricSpec>& energy_metrics();
bool is_energy_metric(const std::string& name);

// Work per joule of a run: "flop_per_joule" (FLOP/J) for flop > 0 and "bytes_per_joule" (B/J) for
// bytes > 0, from the energy per run (J). The one place FLOP/J and bytes/J are named, for
// derive_metric and for work declared to kscope.
std::vector<DerivedValue> energy_efficiency(double energy_per_run_j, double flop, double bytes);
// The same from a run's measured values, which must hold kEnergyPerRun (else ConfigError):
//   s.derive_metric = [](const kscope::MeasuredValues& m, const kscope::Config& c) {
//     return kscope::energy_efficiency(m, 2.0 * n * n * n, 3.0 * n * n * 2);
//   };
std::vector<DerivedValue> energy_efficiency(const MeasuredValues& measured, double flop, double bytes);

}  // namespace kscope

#pragma once
// Energy per run from a GPU's total-energy counter, which changes only at its own updates (every
// ~100 ms on an H200, in whole mJ) while a kernel lasts microseconds. The method (docs/energy.md):
//   - A window opens at a counter update, then the runs go back to back until their work has
//     lasted window_s; once the GPU has finished it, the window closes at the first update at least
//     kSettleSeconds later. The counter's difference is then the energy between two updates, whose
//     moments are known to one read (~3 ms on an H200), however coarse the counter.
//   - The window's margins without work (before the first run, after the last: up to an update
//     period) are counted at the idle power; the L2 flushes before the regions, measured once as a
//     window of flushes alone, are taken out per flush.
//   - Idle power: the counter over a window in which this process runs nothing, right after a burst
//     of work, so that the GPU is in the state it idles in between runs (with its clocks up an H200
//     idled at 132 W in a session, against 84 W after a long rest).
#include <cmath>
#include <cstddef>
#include <functional>

#include "kscope/measurement_backend.hpp"

namespace kscope::detail {

// What the session measures once, for every window.
struct EnergyCalibration {
  double idle_power_w = NAN;
  double flush_energy_j = 0;     // one L2 flush, all of it (not only above idle)
  double flush_time_s = 0;
  double update_period_s = NAN;  // the counter's median interval between updates, seen while idle
};

// A window: the counter at the updates that bound it, and when its work started and ended.
struct EnergyWindow {
  EnergyReading open, close;
  double work_start_s = 0;
  double work_end_s = 0;
};

struct EnergyPerRun {
  double energy_j = NAN;         // kEnergyPerRun
  double average_power_w = NAN;  // kAveragePower
  double above_idle_j = NAN;     // kEnergyAboveIdle
  double run_time_s = NAN;       // the time one run took in the window, its flushes left out
};

// No GPU draws this much: a window's counter difference above it is a counter that restarted.
inline constexpr double kMaxPlausiblePowerW = 10000;

// The counter's difference over the window in J, across a wrap-around at 2^64; NaN when it is
// more than kMaxPlausiblePowerW could use (the counter restarted, as after a driver reload).
double window_energy_j(const EnergyWindow& window);

// The per-run values of a window that held `runs` runs and `flushes` L2 flushes.
EnergyPerRun energy_per_run(const EnergyWindow& window, std::size_t runs, std::size_t flushes,
                            const EnergyCalibration& calibration);

class EnergyMeter {
 public:
  // The closing update comes at least this long after the work ended, for a counter whose value
  // trails the GPU by a little (none was seen on an H200, to its ~3 ms per read).
  static constexpr double kSettleSeconds = 0.01;
  // A window lasts at least this many counter updates (Settings::energy_window_s is checked).
  static constexpr double kMinUpdatesPerWindow = 5;

  // Reads the counter once: throws BackendError naming why it cannot be read.
  EnergyMeter(EnergyCounter& counter, double window_s);

  // Once, before the first window: launches flushes back to back (`flush` one, `sync` waits for
  // the GPU) for window_s to measure one flush's energy and time when `measure_flush`, else for a
  // moment to wake the GPU up; then measures the idle power. Throws ConfigError when window_s is
  // shorter than kMinUpdatesPerWindow updates.
  void calibrate(const std::function<void()>& flush, const std::function<void()>& sync, bool measure_flush);
  const EnergyCalibration& calibration() const { return calibration_; }
  // The idle power now (the same measurement as calibrate's).
  double measure_idle_power_w();

  // Waits for a counter update: the window's work starts after it.
  void open_window();
  // The window's work has lasted window_s.
  bool window_full() const;
  // Once the window's work has finished on the GPU: waits for the closing update.
  EnergyPerRun close_window(std::size_t runs, std::size_t flushes);

 private:
  // The first reading of a new counter value taken at or after `not_before_s` (on the counter's
  // clock). Throws BackendError when the counter does not change for kStalledSeconds.
  EnergyReading next_update(double not_before_s);
  struct FlushWindow {
    EnergyWindow window;
    std::size_t count;
  };
  FlushWindow flush_window(const std::function<void()>& flush, const std::function<void()>& sync, double seconds);

  static constexpr double kStalledSeconds = 5.0;
  static constexpr double kRampDownSeconds = 0.2;  // after work, before idle is measured

  EnergyCounter& counter_;
  double window_s_;
  EnergyCalibration calibration_;
  EnergyWindow window_;
};

}  // namespace kscope::detail

#include "core/control/energy_meter.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include "core/model/caller_language.hpp"
#include "core/model/log.hpp"
#include "core/model/median.hpp"
#include "core/model/suggest.hpp"
#include "kscope/errors.hpp"

namespace kscope::detail {
namespace {

[[noreturn]] void counter_stalled(double seconds) {
  throw BackendError("the GPU's energy counter did not change for " + fixed(seconds, 0) +
                     " s, so it cannot time the energy windows here. Measure without the nvml__ energy metrics");
}

}  // namespace

double window_energy_j(const EnergyWindow& window) {
  const std::uint64_t difference_mj = window.close.millijoules - window.open.millijoules;  // modulo 2^64
  const double energy_j = static_cast<double>(difference_mj) / 1000.0;
  const double duration_s = window.close.time_s - window.open.time_s;
  return energy_j > kMaxPlausiblePowerW * duration_s ? NAN : energy_j;
}

EnergyPerRun energy_per_run(const EnergyWindow& window, std::size_t runs, std::size_t flushes,
                            const EnergyCalibration& calibration) {
  const double idle_w = calibration.idle_power_w;
  const double margins_s = (window.work_start_s - window.open.time_s) + (window.close.time_s - window.work_end_s);
  const double work_energy_j = window_energy_j(window) - idle_w * margins_s;
  const double n = static_cast<double>(runs), f = static_cast<double>(flushes);
  EnergyPerRun out;
  out.energy_j = (work_energy_j - f * calibration.flush_energy_j) / n;
  out.run_time_s = (window.work_end_s - window.work_start_s - f * calibration.flush_time_s) / n;
  out.average_power_w = out.run_time_s > 0 ? out.energy_j / out.run_time_s : NAN;
  out.above_idle_j = out.energy_j - idle_w * out.run_time_s;
  return out;
}

EnergyMeter::EnergyMeter(EnergyCounter& counter, double window_s) : counter_(counter), window_s_(window_s) {
  counter_.read();
}

EnergyReading EnergyMeter::next_update(double not_before_s) {
  EnergyReading last = counter_.read();
  const double stalled_at_s = last.time_s + kStalledSeconds;
  while (true) {
    const EnergyReading reading = counter_.read();
    // A change between two consecutive reads: the update happened between them.
    if (reading.millijoules != last.millijoules && reading.time_s >= not_before_s) return reading;
    if (reading.millijoules == last.millijoules && reading.time_s > stalled_at_s) counter_stalled(kStalledSeconds);
    last = reading;
  }
}

EnergyMeter::FlushWindow EnergyMeter::flush_window(const std::function<void()>& flush,
                                                  const std::function<void()>& sync, double seconds) {
  constexpr int kFlushesPerSync = 64;  // enough queued to keep the GPU busy between the host's checks
  EnergyWindow window;
  window.open = next_update(counter_.now_s());
  window.work_start_s = counter_.now_s();
  std::size_t flushes = 0;
  do {
    for (int i = 0; i < kFlushesPerSync; ++i) flush();
    sync();
    flushes += kFlushesPerSync;
  } while (counter_.now_s() - window.work_start_s < seconds);
  window.work_end_s = counter_.now_s();
  window.close = next_update(window.work_end_s + kSettleSeconds);
  return {window, flushes};
}

void EnergyMeter::calibrate(const std::function<void()>& flush, const std::function<void()>& sync,
                            bool measure_flush) {
  constexpr double kWakeUpSeconds = 0.2;
  const FlushWindow flushes = flush_window(flush, sync, measure_flush ? window_s_ : kWakeUpSeconds);
  calibration_.idle_power_w = measure_idle_power_w();
  if (measure_flush) {
    const EnergyPerRun one = energy_per_run(flushes.window, flushes.count, 0, calibration_);
    calibration_.flush_energy_j = one.energy_j;
    calibration_.flush_time_s = one.run_time_s;
  }
  const double period_s = calibration_.update_period_s;
  if (window_s_ < kMinUpdatesPerWindow * period_s)
    throw ConfigError(option("energy_window_s") + " is " + fixed(window_s_, 3) + " s, shorter than " +
                      fixed(kMinUpdatesPerWindow, 0) + " updates of this GPU's energy counter (one every " +
                      fixed(period_s * 1000, 0) + " ms): the counter could not resolve a window's energy. Give at "
                      "least " + fixed(kMinUpdatesPerWindow * period_s, 2) + " s (1 s by default)");
}

double EnergyMeter::measure_idle_power_w() {
  const EnergyReading first = next_update(counter_.now_s() + kRampDownSeconds);
  std::vector<double> intervals_s;
  EnergyReading previous_update = first, last = first;
  while (previous_update.time_s < first.time_s + window_s_) {
    const EnergyReading reading = counter_.read();
    if (reading.millijoules != last.millijoules) {
      intervals_s.push_back(reading.time_s - previous_update.time_s);
      previous_update = reading;
    } else if (reading.time_s - previous_update.time_s > kStalledSeconds) {
      counter_stalled(kStalledSeconds);
    }
    last = reading;
  }
  calibration_.update_period_s = median(intervals_s);
  EnergyWindow idle{first, previous_update, first.time_s, first.time_s};
  return window_energy_j(idle) / (previous_update.time_s - first.time_s);
}

void EnergyMeter::open_window() {
  window_ = EnergyWindow{};
  window_.open = next_update(counter_.now_s());
  window_.work_start_s = counter_.now_s();
}

bool EnergyMeter::window_full() const { return counter_.now_s() - window_.work_start_s >= window_s_; }

EnergyPerRun EnergyMeter::close_window(std::size_t runs, std::size_t flushes) {
  window_.work_end_s = counter_.now_s();
  window_.close = next_update(window_.work_end_s + kSettleSeconds);
  if (std::isnan(window_energy_j(window_)))
    log_warning("the GPU's energy counter went from " + std::to_string(window_.open.millijoules) + " to " +
                std::to_string(window_.close.millijoules) + " mJ in " +
                fixed(window_.close.time_s - window_.open.time_s, 2) +
                " s, more than any GPU uses: it restarted (a driver reload?). That window's energy values are "
                "recorded as NaN");
  return energy_per_run(window_, runs, flushes, calibration_);
}

}  // namespace kscope::detail

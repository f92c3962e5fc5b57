#pragma once
// How the simulated GPU's timings vary (kscope/testing.hpp: SimulatedBackend::set_noise), so that
// what decides between configs (kscope::compare, kscope::tune) is tested on the CPU against a known
// truth: every kernel launched gets its duration times a random jitter and, rarely, an outlier, by
// its own noise (per kernel name: a sweep whose configs launch kernels of their own names has noise
// per config, whatever order a race visits them in); the whole GPU drifts slowly and its SM clock
// drops at random moments, which the clock readings show and which stretch the part of a kernel's
// time that follows the clock.
// Deterministic: the same seed and the same launches give the same durations and readings.
#include <cstddef>
#include <cstdint>
#include <map>
#include <random>
#include <string>

namespace kscope::testing {

// What varies between the launches of one kernel.
struct KernelNoise {
  double jitter_pct = 0;        // each duration times exp(N(0, s)), s = ln(1 + jitter_pct/100): about its RSD
  double outlier_rate = 0;      // the share of launches that take outlier_factor times as long
  double outlier_factor = 1.5;  // how many times longer an outlier launch takes
  // The share of the duration that scales with rated / current SM clock: 1 for a compute-bound
  // kernel, 0 for a memory-bound one (its time follows the memory clock, which stays put).
  double clock_bound = 1;
};

// How a simulated GPU's timings vary (SimulatedBackend::set_noise): per-kernel jitter and outliers,
// a slow drift and SM clock drops, all drawn from `seed`, so a test's noise is the same every run.
struct SimulatedNoise {
  KernelNoise kernel;                             // every kernel's, unless per_kernel names it
  std::map<std::string, KernelNoise> per_kernel;  // by the name given to SimulatedBackend::launch
  // Durations times 1 + drift_pct/100 * sin(2 pi t / drift_period_s + phase), t the simulated time
  // and the phase drawn from the seed: a drift the clock readings do not show (board temperature).
  double drift_pct = 0;
  double drift_period_s = 1;  // the drift's period in simulated seconds
  // The SM clock stays at the device's rated clock, except that it drops to dropped_sm_clock_mhz
  // clock_drops_per_s times a simulated second on average, for clock_drop_s on average each time
  // (both exponentially distributed).
  double clock_drops_per_s = 0;
  double dropped_sm_clock_mhz = 1755;  // the SM clock during a drop
  double clock_drop_s = 0.01;  // a drop's mean length, in simulated seconds
  // The simulated time a run takes besides its kernels (its flush, the host's launches).
  double run_overhead_s = 50e-6;
  std::uint64_t seed = 0;  // every random draw follows from it

  // Throws ConfigError naming a field out of range.
  void validate() const;
};

// The simulated GPU's own time and clock, and the durations its launches get.
class NoiseModel {
 public:
  // `noise` as validated; the clock drops from the device's rated clock.
  NoiseModel(const SimulatedNoise& noise, double rated_sm_clock_mhz);

  // A launch of kernel `name` of `nominal_ns`, `gap_ns` after the previous one: its duration now.
  double launch(const std::string& name, double nominal_ns, double gap_ns);
  // A run begins: run_overhead_s passes.
  void run_started();
  double sm_clock_mhz();  // now
  double now_s() const { return now_s_; }  // the simulated time, in seconds

 private:
  const KernelNoise& of(const std::string& name) const;
  void advance(double seconds);

  SimulatedNoise noise_;
  double rated_sm_clock_mhz_;
  double now_s_ = 0;
  double drift_phase_ = 0;
  std::mt19937_64 durations_;  // the launches' draws
  std::mt19937_64 clock_;      // the clock's changes: independent of how many launches there are
  bool dropped_ = false;
  double next_change_s_ = 0;
};

}  // namespace kscope::testing

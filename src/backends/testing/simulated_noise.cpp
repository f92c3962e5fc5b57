#include "kscope/simulated_noise.hpp"

#include <cmath>
#include <numbers>
#include <sstream>
#include <string>

#include "kscope/errors.hpp"

namespace kscope::testing {
namespace {

void require(bool ok, const std::string& field, double value, const std::string& accepts) {
  if (ok) return;
  std::ostringstream text;
  text << "the simulated noise's " << field << " is " << value << ": it takes " << accepts;
  throw ConfigError(text.str());
}

void check(const KernelNoise& n, const std::string& where) {
  require(std::isfinite(n.jitter_pct) && n.jitter_pct >= 0 && n.jitter_pct < 100, where + "jitter_pct", n.jitter_pct,
          "a percentage from 0 up to 100");
  require(n.outlier_rate >= 0 && n.outlier_rate <= 1, where + "outlier_rate", n.outlier_rate, "a share from 0 to 1");
  require(std::isfinite(n.outlier_factor) && n.outlier_factor > 0, where + "outlier_factor", n.outlier_factor,
          "a positive factor");
  require(n.clock_bound >= 0 && n.clock_bound <= 1, where + "clock_bound", n.clock_bound,
          "a share from 0 (memory-bound) to 1 (compute-bound)");
}

double exponential(std::mt19937_64& generator, double mean) {
  return std::exponential_distribution<double>(1 / mean)(generator);
}

}  // namespace

void SimulatedNoise::validate() const {
  check(kernel, "");
  for (const auto& [name, noise] : per_kernel) check(noise, "per_kernel['" + name + "'].");
  require(std::isfinite(drift_pct) && drift_pct >= 0 && drift_pct < 100, "drift_pct", drift_pct,
          "a percentage from 0 up to 100");
  require(std::isfinite(drift_period_s) && drift_period_s > 0, "drift_period_s", drift_period_s, "a positive time");
  require(std::isfinite(clock_drops_per_s) && clock_drops_per_s >= 0, "clock_drops_per_s", clock_drops_per_s,
          "a rate >= 0");
  require(std::isfinite(dropped_sm_clock_mhz) && dropped_sm_clock_mhz > 0, "dropped_sm_clock_mhz",
          dropped_sm_clock_mhz, "a positive clock");
  require(std::isfinite(clock_drop_s) && clock_drop_s > 0, "clock_drop_s", clock_drop_s, "a positive time");
  require(std::isfinite(run_overhead_s) && run_overhead_s >= 0, "run_overhead_s", run_overhead_s, "a time >= 0");
}

NoiseModel::NoiseModel(const SimulatedNoise& noise, double rated_sm_clock_mhz)
    : noise_(noise), rated_sm_clock_mhz_(rated_sm_clock_mhz), durations_(noise.seed), clock_(noise.seed ^ 0x9e3779b97f4a7c15ull) {
  noise_.validate();
  drift_phase_ = std::uniform_real_distribution<double>(0, 2 * std::numbers::pi)(durations_);
  next_change_s_ = noise_.clock_drops_per_s > 0 ? exponential(clock_, 1 / noise_.clock_drops_per_s) : INFINITY;
}

const KernelNoise& NoiseModel::of(const std::string& name) const {
  const auto found = noise_.per_kernel.find(name);
  return found == noise_.per_kernel.end() ? noise_.kernel : found->second;
}

void NoiseModel::advance(double seconds) { now_s_ += seconds; }

double NoiseModel::sm_clock_mhz() {
  while (next_change_s_ <= now_s_) {
    dropped_ = !dropped_;
    next_change_s_ += exponential(clock_, dropped_ ? noise_.clock_drop_s : 1 / noise_.clock_drops_per_s);
  }
  return dropped_ ? noise_.dropped_sm_clock_mhz : rated_sm_clock_mhz_;
}

void NoiseModel::run_started() { advance(noise_.run_overhead_s); }

double NoiseModel::launch(const std::string& name, double nominal_ns, double gap_ns) {
  advance(std::max(gap_ns, 0.0) * 1e-9);
  const KernelNoise& n = of(name);
  const double jitter = std::exp(std::log1p(n.jitter_pct / 100) * std::normal_distribution<double>()(durations_));
  const bool outlier = std::uniform_real_distribution<double>()(durations_) < n.outlier_rate;
  const double drift =
      1 + noise_.drift_pct / 100 * std::sin(2 * std::numbers::pi * now_s_ / noise_.drift_period_s + drift_phase_);
  const double clock = n.clock_bound * rated_sm_clock_mhz_ / sm_clock_mhz() + (1 - n.clock_bound);
  const double duration = std::max(nominal_ns, 0.0) * jitter * (outlier ? n.outlier_factor : 1) * drift * clock;
  advance(duration * 1e-9);
  return duration;
}

}  // namespace kscope::testing

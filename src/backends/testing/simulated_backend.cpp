#include <algorithm>
#include <cmath>

#include "kscope/errors.hpp"
#include "kscope/testing.hpp"

namespace kscope::testing {

SimulatedBackend::SimulatedBackend() = default;

void SimulatedBackend::launch(const std::string& kernel_name, double duration_ns) {
  launches_.push_back(Launch{current_region_, kernel_name, duration_ns});
}

std::vector<MetricSpec> SimulatedBackend::metrics() const {
  return {{"test__kernel_duration", "ns", "simulated duration given to SimulatedBackend::launch (not a measurement)"}};
}

SessionInfo SimulatedBackend::describe() const {
  SessionInfo info;
  info.backend = "test (simulated)";
  info.gpu = "simulated GPU (no measurement)";
  info.gpu_uuid = "GPU-00000000-0000-0000-0000-000000000000";
  info.host = "simulated";
  info.rated_sm_clock_mhz = 1980;
  info.rated_memory_clock_mhz = 3201;
  return info;
}

void SimulatedBackend::begin_session(const Settings&) {
  if (open_) throw BackendError("SimulatedBackend: begin_session while a session is open");
  open_ = true;
  ++sessions_;
}

void SimulatedBackend::end_session() noexcept { open_ = false; }

void SimulatedBackend::begin_run() {
  pass_ = 1;
  launches_.clear();
  current_region_ = -1;
}

void SimulatedBackend::region_begin(std::size_t region) { current_region_ = static_cast<std::ptrdiff_t>(region); }

void SimulatedBackend::region_end(std::size_t) { current_region_ = -1; }

bool SimulatedBackend::another_pass_needed() {
  if (pass_ >= passes_) return false;
  ++pass_;
  launches_.clear();  // a real multi-pass backend combines passes; the last one stands for them here
  return true;
}

RunMeasurement SimulatedBackend::collect_run(std::size_t region_count) {
  RunMeasurement out(region_count);
  for (const auto& l : launches_)
    if (l.region >= 0) out[static_cast<std::size_t>(l.region)].push_back({l.name, {l.duration_ns}});
  launches_.clear();
  return out;
}

std::vector<RunMeasurement> SimulatedBackend::collect_runs() {
  ++collections_;
  return MeasurementBackend::collect_runs();
}

void SimulatedBackend::abandon_run() noexcept {
  launches_.clear();
  current_region_ = -1;
}

ClockReading FakeDevice::clocks() {
  if (clocks_.empty()) return {};
  return clocks_[clock_cursor_++ % clocks_.size()];
}

std::optional<double> FakeDevice::thermal_margin_c() {
  if (margins_.empty()) return std::nullopt;
  const double m = margins_[std::min(margin_cursor_, margins_.size() - 1)];
  ++margin_cursor_;
  return m;
}

ClockReading FakeDevice::lock_base_clocks() {
  if (!deny_.empty()) throw BackendError(deny_);
  locked_ = true;
  ++locks_;
  return kBaseClocks;
}

void FakeDevice::restore_clocks() noexcept {
  if (!locked_) return;
  locked_ = false;
  ++restores_;
}

}  // namespace kscope::testing

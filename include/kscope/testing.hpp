#pragma once
// A simulated backend for testing the engine without a GPU. It lives in the separate library
// kscope_testing, is never chosen through Settings::backend, and every row it produces says
// "test (simulated)" in the Backend column.
#include <cstddef>
#include <string>
#include <vector>

#include "kscope/measurement_backend.hpp"

namespace kscope::testing {

class SimulatedBackend final : public MeasurementBackend {
 public:
  SimulatedBackend();

  // Called from the body: a "kernel" of the given duration launched now.
  void launch(const std::string& kernel_name, double duration_ns);

  // Clock readings returned in turn by read_clocks() (cycled); NaN when empty.
  void set_clock_readings(std::vector<ClockReading> readings) { clocks_ = std::move(readings); }

  // Replay passes per run (as a counter backend with a multi-pass metric set); 1 by default.
  void set_passes(std::size_t passes) { passes_ = passes; }

  std::size_t flush_count() const { return flushes_; }
  std::size_t session_count() const { return sessions_; }
  bool session_open() const { return open_; }

  std::vector<MetricSpec> metrics() const override;
  bool observes_kernels() const override { return true; }
  SessionInfo describe() const override;
  void begin_session(const Settings& settings) override;
  void end_session() noexcept override;
  void begin_run() override;
  void flush_cache() override { ++flushes_; }
  void region_begin(std::size_t region) override;
  void region_end(std::size_t region) override;
  bool another_pass_needed() override;
  std::vector<std::vector<KernelMeasurement>> collect_run(std::size_t region_count) override;
  void abandon_run() noexcept override;
  ClockReading read_clocks() override;

 private:
  struct Launch {
    std::ptrdiff_t region;  // -1 outside any region
    std::string name;
    double duration_ns;
  };
  std::vector<Launch> launches_;
  std::ptrdiff_t current_region_ = -1;
  std::vector<ClockReading> clocks_;
  std::size_t clock_cursor_ = 0;
  std::size_t passes_ = 1;
  std::size_t pass_ = 1;
  std::size_t flushes_ = 0;
  std::size_t sessions_ = 0;
  bool open_ = false;
};

}  // namespace kscope::testing

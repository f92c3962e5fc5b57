#pragma once
// The interface between the engine and whatever measures kernels. The runner calls it in this
// order for every run of every config (clock readings go through device_control()):
//   read clocks, begin_run,
//   [ { flush_cache (cache_control=all), region_begin, <user code>, region_end }* ]
//     repeated while another_pass_needed() (the body is called once per pass),
//   end_run
// and collect_runs once up to runs_per_collection() runs have ended (sooner when it must decide:
// a config's last possible run, a batch older than a few milliseconds, a failure).
// Implementations: src/backends/cupti, src/backends/events, and the simulated test backend.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "kscope/results.hpp"
#include "kscope/settings.hpp"

namespace kscope {

struct MetricSpec {
  std::string name;
  std::string unit;
  std::string description;
};

// One kernel (or, for backends that cannot see kernels, the whole region) measured in one run.
struct KernelMeasurement {
  std::string name;            // demangled; empty when the backend does not observe kernels
  std::vector<double> values;  // one per MetricSpec, in metrics() order
};

// What one run produced: per region index, the kernels that ran in it.
using RunMeasurement = std::vector<std::vector<KernelMeasurement>>;

struct ClockReading {
  double sm_mhz = NAN;
  double memory_mhz = NAN;
  std::optional<std::uint64_t> event_reasons;  // NVML clock-event reason bits, when known
};

// Telemetry and clock control of the measured GPU: NVML on the real backends, fakes in tests.
class DeviceControl {
 public:
  virtual ~DeviceControl() = default;
  virtual ClockReading clocks() = 0;
  // T.Limit headroom in °C (how far the GPU is below its slowdown temperature); nullopt if unknown.
  virtual std::optional<double> thermal_margin_c() = 0;
  // Locks SM and memory clocks to base until restore_clocks(); returns the locked clocks. Throws
  // BackendError naming the fix when not permitted or not supported.
  virtual ClockReading lock_base_clocks() = 0;
  virtual void restore_clocks() noexcept = 0;
};

class MeasurementBackend {
 public:
  virtual ~MeasurementBackend() = default;

  virtual std::vector<MetricSpec> metrics() const = 0;
  // False when a region yields one measurement and no kernel names (CUDA events): the kernel
  // count rules (none, several) cannot be checked and are not applied.
  virtual bool observes_kernels() const = 0;
  // Backend, device and host facts for every row; cache/clock fields are filled by the runner.
  virtual SessionInfo describe() const = 0;

  virtual void begin_session(const Settings& settings) = 0;
  virtual void end_session() noexcept = 0;

  virtual void begin_run() = 0;
  virtual void flush_cache() = 0;
  virtual void region_begin(std::size_t region) = 0;
  virtual void region_end(std::size_t region) = 0;
  // After each call of the body: true asks the runner to call it again for the same run (a
  // backend whose metrics need several replay passes). Every pass must open the same regions.
  virtual bool another_pass_needed() { return false; }
  // Waits for the run's GPU work and returns, per region index (0..region_count-1), what ran in it.
  virtual RunMeasurement collect_run(std::size_t region_count) = 0;
  // Called after a run whose body threw: drop whatever that run left pending (not the runs that
  // ended before it and wait for collect_runs).
  virtual void abandon_run() noexcept = 0;

  // Batched collection, for backends whose collection has a fixed cost worth sharing (the cupti
  // backend's synchronize and activity flush). end_run marks the end of a run's body; collect_runs
  // returns every run ended since the last call, oldest first. The defaults collect each run as it
  // ends, through collect_run.
  virtual std::size_t runs_per_collection() const { return 1; }
  virtual void end_run(std::size_t region_count) { ended_.push_back(collect_run(region_count)); }
  virtual std::vector<RunMeasurement> collect_runs() { return std::exchange(ended_, {}); }

  // The measured device's telemetry and clock control; nullptr where there is none.
  virtual DeviceControl* device_control() { return nullptr; }

 private:
  std::vector<RunMeasurement> ended_;  // the defaults' runs, collected and not yet handed back
};

}  // namespace kscope

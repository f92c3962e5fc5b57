#pragma once
// The interface between the engine and whatever measures kernels. The session calls it in this
// order (clock readings and the thermal guard go through device_control()):
//
//   begin_session
//   per config, per batch of runs (at most max_batch_runs()):
//     begin_batch(runs)
//     per replay pass (1, 2, ... while another_pass_needed() says so after the pass):
//       per run of the batch (in pass 1, while batch_has_room() after each run):
//         begin_run(run)
//           [ { flush_cache (cache_control=all), region_begin, <user code>, region_end }* ]
//         end_run(run)
//     collect_batch                      -> one RunMeasurement per run of the batch, in order
//   end_session
//
// Every pass of a batch calls the body once per run and must open the same regions. A run whose
// body throws is given to abandon_run(); after a failure in pass 1 the runs before it in the batch
// still get their remaining passes and are collected. A backend whose collection has a fixed cost
// (a device synchronize, an activity flush) shares it across a batch through max_batch_runs().
// A backend whose passes have a fixed cost (the range profiler's start and stop) shares it the same
// way: every pass spans all runs of the batch.
// Implementations: src/backends/{cupti,events,counters,ncu}, and the simulated test backend.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kscope/results.hpp"
#include "kscope/settings.hpp"
#include "kscope/tensor.hpp"

namespace kscope {

class PcSampler;  // kscope/lines.hpp

// A metric a backend measures: the Metric and Unit columns, and a line saying what it is.
struct MetricSpec {
  std::string name;         // the Metric column
  std::string unit;         // the Unit column
  std::string description;  // what it measures, in a few words
};

// When a kernel ran on the GPU: its start and end timestamps in ns, on one clock for the session.
struct GpuInterval {
  std::uint64_t start_ns = 0;  // the kernel's start
  std::uint64_t end_ns = 0;  // the kernel's end
};

// One kernel (or, for backends that cannot see kernels, the whole region) measured in one run.
struct KernelMeasurement {
  std::string name;            // demangled; empty when the backend does not observe kernels
  std::vector<double> values;  // one per MetricSpec, in metrics() order
  // Set by backends that time each kernel (cupti), whose one metric is its duration: with
  // ReplayMode::range a region measures the span from its first kernel's start to its last
  // kernel's end, gaps included.
  std::optional<GpuInterval> gpu_time = std::nullopt;
  // Set by backends that observe calls (CallObserver) for evaluate()'s findings: launched after
  // the call returned; still running when the caller's stream reached the call's end.
  bool launched_after_return = false;
  bool unjoined = false;  // still running when the caller's stream reached the call's end
  // Set by backends that time a whole region from its start on the default stream (events): how
  // long the GPU waited for the host to enqueue the region's first work, in ns, a part of the value
  // (0 when the work was enqueued before the GPU reached the region's start, or the wait is within
  // the backend's resolution; NaN where unknown).
  double host_gap_ns = NAN;
  std::string first_work = {};  // that first work ("cuLaunchKernel on a non-blocking stream, from another thread")
};

// What one run produced: per region index, the kernels that ran in it.
using RunMeasurement = std::vector<std::vector<KernelMeasurement>>;

// A region a run opened, in order.
struct RegionRecord {
  std::string name;  // the annotation
  bool failed = false;  // marked failed (ignore_failures): recorded as NaN
  std::string reason;  // why it failed, for the warning
};

// Where the session is when it calls the backend.
struct RunContext {
  std::size_t config = 0;        // index in the sweep
  std::size_t run = 0;           // in the config, warm-ups included
  std::size_t batch_index = 0;   // position of this run in its batch
  std::size_t pass = 1;          // replay pass, 1-based
  bool recorded = true;          // false for warm-up runs
  std::size_t recorded_run = 0;  // run - warmup_runs, for recorded runs
};

// The region a backend is told about at region_begin and region_end.
struct RegionContext {
  const RunContext& run;  // the run the region is in
  std::size_t index;        // region index in the run
  const std::string& name;  // the annotation
};

// The clocks read around a run, and NVML's clock-event reasons (throttling).
struct ClockReading {
  double sm_mhz = NAN;      // NaN when unknown
  double memory_mhz = NAN;  // NaN when unknown
  std::optional<std::uint64_t> event_reasons;  // NVML clock-event reason bits, when known
};

// One reading of a GPU's total-energy counter.
struct EnergyReading {
  std::uint64_t millijoules = 0;  // since the driver loaded; wraps around at 2^64
  double time_s = 0;              // when it was read, on the counter's now_s() clock
};

// A GPU's total-energy counter (NVML's on the real backends, a simulated GPU's in tests) and the
// clock its readings are timed on. The counter changes only at its own updates (every ~100 ms on
// an H200), each bringing the energy used since the one before.
class EnergyCounter {
 public:
  virtual ~EnergyCounter() = default;
  // Throws BackendError naming why the counter cannot be read (no NVML, no counter on this GPU).
  virtual EnergyReading read() = 0;
  virtual double now_s() = 0;  // the clock the readings are timed on, in seconds
};

// Telemetry and clock control of the measured GPU: NVML on the real backends, fakes in tests.
class DeviceControl {
 public:
  virtual ~DeviceControl() = default;
  virtual ClockReading clocks() = 0;  // the SM and memory clocks now, and the clock-event reasons
  // T.Limit headroom in °C (how far the GPU is below its slowdown temperature); nullopt if unknown.
  virtual std::optional<double> thermal_margin_c() = 0;
  // Locks the SM clock to base until restore_clocks() (NVML has no base memory clock to lock to);
  // returns the clocks read once locked. Throws BackendError naming the fix when not permitted or
  // not supported.
  virtual ClockReading lock_base_clocks() = 0;
  virtual void restore_clocks() noexcept = 0;  // undoes lock_base_clocks(); called on every way out
  // The GPU's total-energy counter, for the energy metrics (kscope/energy.hpp); nullptr where
  // there is none to ask. Its read() says why, where it cannot be read.
  virtual EnergyCounter* energy_counter() { return nullptr; }
  // The processes other than this one that ran kernels on the GPU lately (NVML's running compute
  // processes and their SM utilization, as of its latest sample), by the pid NVML gives; empty when
  // none did, or where it cannot tell. Asked after each batch of runs: those runs are flagged.
  virtual std::vector<unsigned> other_processes() { return {}; }
};

// What evaluate() (kscope/evaluate.hpp) needs of a backend beyond durations: every activity a
// call causes (kernels, memory copies and fills, on any stream, from any thread) in its region's
// measurements, flagged as below. (Its reads of tensors are kscope/tensor_checks.hpp's, which the
// backend registry pairs with the backend.)
class CallObserver {
 public:
  virtual ~CallObserver() = default;
  // Before begin_session: trace memory copies and fills too, and flag every activity.
  virtual void observe_calls() = 0;
  // In an open region, right after the measured call returned: what is launched from now on is
  // launched_after_return; the point the work on `stream` (a cudaStream_t as an integer, 0 the
  // legacy default stream) has reached is the call's end for its caller, and an activity still
  // running past it is unjoined. The region stays open until the GPU has drained.
  virtual void call_returned(const RegionContext& region, std::uintptr_t stream) = 0;
  // A persisting-L2 carve-out or access-policy window set on the device or on `stream` since the
  // last call, in words, and reset to none; empty when none was set.
  virtual std::string take_persisting_l2(std::uintptr_t stream) = 0;
};

// What measures: the interface every backend implements (cupti, events, counters, ncu and the
// simulated one). The engine calls it phase by phase; docs/architecture.md, "The backend
// interface", says in which order.
class MeasurementBackend {
 public:
  virtual ~MeasurementBackend() = default;

  virtual std::vector<MetricSpec> metrics() const = 0;  // what it measures, in its order
  // Backend, device and host facts for every row; cache/clock fields are filled by the session.
  virtual SessionInfo describe() const = 0;
  // The measured device's telemetry and clock control; nullptr where there is none.
  virtual DeviceControl* device_control() { return nullptr; }
  // What evaluate() needs; nullptr for a backend that cannot see every stream's work.
  virtual CallObserver* call_observer() { return nullptr; }
  // What profile_lines() needs: program-counter sampling; nullptr for a backend that cannot sample.
  virtual PcSampler* pc_sampler() { return nullptr; }

  // Opens the session before the first run (throws BackendError when nothing can measure here).
  virtual void begin_session(const Settings& settings) = 0;
  virtual void end_session() noexcept = 0;  // after the last run, on every way out

  // The most runs one batch may hold.
  virtual std::size_t max_batch_runs() const { return 1; }
  // In pass 1, after each run: false ends the batch there (a backend whose batch storage fills with
  // what the runs launch, which it learns only as they run).
  virtual bool batch_has_room() const { return true; }
  virtual void begin_batch(std::size_t /*runs*/) {}  // before a batch of this many runs
  virtual void begin_run(const RunContext& /*run*/) {}  // before each run's body
  virtual void flush_cache() = 0;  // the L2 flush before a region (cache_control all), outside what it measures
  // Waits until the GPU has finished the work launched so far (energy windows end on it).
  virtual void synchronize() {}
  virtual void region_begin(const RegionContext& region) = 0;  // an annotation opened
  virtual void region_end(const RegionContext& region) = 0;    // it closed
  // `regions`: what the run opened, in order.
  virtual void end_run(const RunContext& /*run*/, const std::vector<RegionRecord>& /*regions*/) {}
  // After each pass over the batch: true asks for another pass over the same runs.
  virtual bool another_pass_needed() { return false; }
  // Waits for the batch's GPU work and returns, per run that ended, per region index, what ran.
  virtual std::vector<RunMeasurement> collect_batch() = 0;
  // The run in flight failed: drop what it left pending (in pass 1 the runs that ended before it
  // stay for their remaining passes and collect_batch; in a later pass the whole batch is dropped).
  virtual void abandon_run(const RunContext& run) noexcept = 0;
};

}  // namespace kscope

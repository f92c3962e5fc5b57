#pragma once
// A simulated backend for testing a sweep without a GPU (kscope's own CPU tests, a user's CI): give
// it to profile_with_backend and launch() "kernels" of known durations from the body. It lives in
// the separate library kscope_testing (CMake target kscope::testing, installed with the package),
// is never chosen through Settings::backend, and every row it produces says "test (simulated)" in
// the Backend column.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <mutex>
#include <optional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "kscope/lines.hpp"
#include "kscope/measurement_backend.hpp"
#include "kscope/simulated_noise.hpp"

namespace kscope::testing {

// How the simulated GPU draws power, and its total-energy counter.
struct SimulatedPower {
  double idle_w = 100;       // with nothing running
  double kernel_w = 300;     // while a launched kernel runs
  double flush_w = 200;      // while an L2 flush runs
  double flush_s = 20e-6;    // one flush
  double update_s = 0.01;    // the counter changes this often (an H200's: ~0.1 s)
  double read_s = 0.001;     // one read of the counter (an H200's: ~3 ms)
  std::uint64_t start_mj = 1'000'000'000;  // the counter at time 0
};

// The simulated GPU's total-energy counter. Simulated time passes only as the GPU works (run())
// and as the counter is read; between updates the counter shows the energy as of the last one,
// in whole millijoules, wrapping around at 2^64 as NVML's unsigned 64-bit value would.
class SimulatedEnergy final : public EnergyCounter {
 public:
  // Before the session: the counter starts at power.start_mj.
  void set_power(SimulatedPower power);
  const SimulatedPower& power() const { return power_; }  // as set_power left it
  // The GPU draws `watts` for `seconds`.
  void run(double seconds, double watts);
  // Makes read() throw BackendError(message), as a GPU without the counter.
  void remove(std::string message) { missing_ = std::move(message); }
  // The counter continues from `millijoules` at its next update (as after a driver reload).
  void restart_at(std::uint64_t millijoules);
  std::size_t reads() const { return reads_; }  // how often the counter was read

  // Each read takes read_s, half of it before the value is taken, at idle power.
  EnergyReading read() override;
  double now_s() override { return now_s_; }

 private:
  std::uint64_t counter_at(double energy_j) const;

  SimulatedPower power_;
  double now_s_ = 0;
  double energy_j_ = 0;  // since time 0
  std::uint64_t offset_mj_ = power_.start_mj;  // the counter is offset + the energy used, in mJ
  std::uint64_t shown_mj_ = power_.start_mj;   // as of the last update
  std::string missing_;
  std::size_t reads_ = 0;
};

// A scripted GPU for the clock, throttle, thermal and energy logic.
class FakeDevice final : public DeviceControl {
 public:
  // Readings returned in turn by clocks() (cycled); NaN when empty.
  void set_clock_readings(std::vector<ClockReading> readings) { clocks_ = std::move(readings); }
  // Where clocks() reads when no readings are scripted (the noise model's clock); NaN without one.
  void set_clock_source(std::function<ClockReading()> source) { clock_source_ = std::move(source); }
  // Margins returned in turn by thermal_margin_c() (the last one repeats); nullopt when empty.
  void set_thermal_margins(std::vector<double> margins) { margins_ = std::move(margins); }
  // Makes lock_base_clocks() throw BackendError with this message.
  void deny_clock_lock(std::string message) { deny_ = std::move(message); }
  // What other_processes() returns in turn, one reading per batch of runs (the last one repeats):
  // the pids of other processes running kernels on the GPU; none when empty.
  void set_other_processes(std::vector<std::vector<unsigned>> readings) { others_ = std::move(readings); }

  bool clocks_locked() const { return locked_; }            // lock_base_clocks() holds
  std::size_t restore_count() const { return restores_; }  // restore_clocks() calls so far
  static constexpr ClockReading kBaseClocks{1590, 3201, 0};  // what a locked SimulatedBackend reads: 1590 MHz SM, 3201 MHz memory

  ClockReading clocks() override;
  std::optional<double> thermal_margin_c() override;
  ClockReading lock_base_clocks() override;
  void restore_clocks() noexcept override;
  EnergyCounter* energy_counter() override { return &energy_; }
  std::vector<unsigned> other_processes() override;
  SimulatedEnergy& energy() { return energy_; }  // its energy counter, to set its power

 private:
  SimulatedEnergy energy_;
  std::vector<ClockReading> clocks_;
  std::size_t clock_cursor_ = 0;
  std::function<ClockReading()> clock_source_;
  std::vector<double> margins_;
  std::size_t margin_cursor_ = 0;
  std::vector<std::vector<unsigned>> others_;
  std::size_t others_cursor_ = 0;
  std::string deny_;
  bool locked_ = false;
  std::size_t restores_ = 0;
};

// How a simulated stream is ordered against the default (legacy) stream, as the flags of
// cudaStreamCreateWithFlags say.
enum class StreamKind {
  non_blocking,  // cudaStreamNonBlocking (PyTorch's side streams): no implicit order with the default stream
  blocking,      // cudaStreamDefault: waits for the default stream's earlier work, and the default stream for its
};

// The GPU the simulated backend's sessions describe (SessionInfo): an H200 by default.
struct SimulatedDevice {
  std::string name = "simulated GPU (no measurement)";  // the GPU column
  double rated_sm_clock_mhz = 1980;  // its rated SM clock
  double rated_memory_clock_mhz = 3201;  // its rated memory clock
  std::size_t sm_count = 132;  // streaming multiprocessors
  std::size_t compute_capability = 90;  // major * 10 + minor
  std::size_t memory_bus_width_bits = 6144;  // the DRAM interface's width
};

// The simulated backend's CallObserver (kscope::evaluate). Its device memory is the host's: the
// backend registry pairs it with tensor checks that read the host's memory.
class SimulatedCalls final : public CallObserver {
 public:
  explicit SimulatedCalls(class SimulatedBackend& backend) : backend_(backend) {}  // observes this backend's calls
  void observe_calls() override;
  void call_returned(const RegionContext& region, std::uintptr_t stream) override;
  std::string take_persisting_l2(std::uintptr_t stream) override;

 private:
  class SimulatedBackend& backend_;
};

// One SASS instruction of a simulated kernel: what PC sampling finds there (SimulatedBackend::set_code).
struct SimulatedInstruction {
  std::uint64_t pc_offset = 0;  // from its function's start, in bytes
  std::string sass;             // its text ("LDG.E R2, desc[UR4][R2.64]")
  // Where its code was written, innermost first (SampledInstruction::source); empty: no line information.
  std::vector<SourceLocation> source;
  // Each stall reason's weight: the kernel's samples are shared out over its instructions' reasons in
  // proportion to these.
  std::vector<std::pair<std::string, double>> stalls;
  std::string function;  // a device function not inlined; empty: the kernel's own code
  std::uint64_t executed = 0;         // SASS metrics: warp instructions per launch
  std::uint64_t thread_executed = 0;  // and the threads that executed them
};

// The simulated backend's PcSampler: a launched kernel of duration d gets d * SM clock * SMs / 2^period
// samples, shared out over its code's instructions and reasons (largest remainders, so the counts are
// exact), in the recorded runs' regions of the first pass.
class SimulatedPcSampler final : public PcSampler {
 public:
  explicit SimulatedPcSampler(class SimulatedBackend& backend) : backend_(backend) {}  // samples this backend's launches
  void sample_pcs(const LineSampling& sampling) override;
  SampledCode take_samples() override;

 private:
  class SimulatedBackend& backend_;
};

// A backend that measures nothing: its "kernels" are launch() calls of known durations on a
// simulated GPU clock, with the noise, clocks, power, passes and failures a test sets. Give it to
// profile_with_backend() to test a sweep without a GPU; its rows say "test (simulated)".
class SimulatedBackend final : public MeasurementBackend {
 public:
  SimulatedBackend();  // an H200-like device, no noise, one run per batch
  ~SimulatedBackend() override;

  // The device later sessions describe (its roofs, kscope/roofline.hpp, follow from it).
  void set_device(SimulatedDevice device) { simulated_device_ = std::move(device); }
  // From now on every launch's duration varies as `noise` says (kscope/simulated_noise.hpp), and the
  // clock readings follow its SM clock (unless set_clock_readings scripts them), around the device's
  // rated clock as set_device left it. Throws ConfigError for a field out of range.
  void set_noise(const SimulatedNoise& noise);

  // Called from the body: a "kernel" of the given duration launched now. It runs after the kernel
  // launched before it, `gap_ns` later, on a simulated GPU clock (ReplayMode::range spans them);
  // its energy counter sees the gap at SimulatedPower::idle_w and the kernel at kernel_w.
  // `stream` (0: the default) is one of the simulated GPU's streams: a kernel starts once the
  // kernel before it on its stream has ended and the host has issued it (the latest start so far),
  // so kernels of other streams run beside it, as make_stream() says. Launches may come from any
  // thread. Durations and gaps beyond +-1e18 ns (31 years), or not finite, are a ConfigError.
  // With cache_control all, the L2 flush before each region runs on the default stream for
  // SimulatedPower::flush_s, and a kernel running beside it takes longer by the time it overlapped
  // the flush (as a memory-bound kernel sharing DRAM with it): kscope orders the region's streams
  // after the flush as it does on a GPU (core/engine/stream_join.hpp), so none should.
  void launch(const std::string& kernel_name, double duration_ns, double gap_ns = 0, std::uintptr_t stream = 0);
  // Launches on `stream` follow `kind` from now on; a stream never made is non-blocking. 0 (the
  // default stream) follows the legacy stream's rules, and kPerThreadStream is each launching
  // thread's own default stream, blocking; neither can be made.
  void make_stream(std::uintptr_t stream, StreamKind kind);
  static constexpr std::uintptr_t kPerThreadStream = 2;  // as cudaStreamPerThread
  // `into` waits for what `from` has launched so far (an event recorded on `from`, waited on by `into`).
  void join(std::uintptr_t from, std::uintptr_t into = 0);
  // The host waits for what `stream` has launched so far (a stream synchronize).
  void host_wait(std::uintptr_t stream);
  // The host is busy `ns` before its next launch or the call's return (a slow host's return path,
  // after which short work on an unjoined stream has already ended).
  void host_work(double ns);
  // From the next session on, times each region as the events backend does (on: one value per region,
  // the metric test__region_duration) or each kernel (off, the default). A region's value runs from
  // its start on the default stream (after the L2 flush) to the end of its work on every stream,
  // joined; a launch's gap_ns is then the host issuing it late, and where the region's first launch
  // comes after the GPU reached the region's start the GPU's wait is in the value and reported as
  // HostGapNs (kscope's core/engine/first_work.hpp over the simulated streams, as over CUDA's).
  void set_region_timing(bool on) { region_timing_ = on; }
  // A persisting-L2 carve-out of this many bytes, as a candidate would set it; evaluate() reports and
  // resets it (as does each flush).
  void set_persisting_l2(std::size_t bytes);
  std::size_t persisting_l2_resets() const { return persisting_resets_; }  // resets of the carve-out so far
  // Runs `fn` inside each synchronize() (kscope waiting for the GPU to drain), as another thread
  // launching while the caller waits; an empty function for none.
  void during_synchronize(std::function<void()> fn) { during_synchronize_ = std::move(fn); }

  // PC sampling (profile_lines_with_backend): the code a kernel's samples land on; a kernel without
  // code gets its samples on one instruction without line information, as a library kernel would.
  void set_code(const std::string& kernel_name, std::vector<SimulatedInstruction> code);
  // The text of a source file, as sampling reads it for the line rows (else the file on disk).
  void set_source_text(const std::string& file, std::string text);
  // Each sampled launch loses this many samples in the hardware (a full buffer).
  void set_dropped_samples(std::uint64_t per_launch) { dropped_per_launch_ = per_launch; }
  // Makes sample_pcs throw BackendError(message), as a GPU without profiling permission.
  void deny_sampling(std::string message) { sampling_denied_ = std::move(message); }
  // Whether the simulated GPU counts executed instructions (SASS metrics); true by default.
  void set_sass_metrics_supported(bool supported) { sass_metrics_supported_ = supported; }

  FakeDevice& device() { return device_; }  // its clocks, thermal margins and energy counter
  // Clock readings returned in turn around the runs (FakeDevice::set_clock_readings).
  void set_clock_readings(std::vector<ClockReading> readings) { device_.set_clock_readings(std::move(readings)); }

  // Replay passes per batch (as a counter backend with a multi-pass metric set); 1 by default.
  // Each pass replaces the launches of the one before: the last pass stands for all of them.
  void set_passes(std::size_t passes) { passes_ = passes; }
  // The most runs a batch holds (as the cupti backend batches them); 1 by default.
  void set_max_batch_runs(std::size_t runs) { max_batch_runs_ = runs; }
  // The most launches pass 1 of a batch holds, as the counter backend's image holds ranges: the
  // batch takes no more runs once one more like its largest would not fit. No limit by default.
  void set_batch_launches(std::size_t launches) { batch_launches_ = launches; }
  std::size_t collections() const { return batch_sizes_.size(); }  // batches collected so far
  // The runs of each batch collected, in order.
  const std::vector<std::size_t>& batch_sizes() const { return batch_sizes_; }
  // Makes region_end throw BackendError(message) once, as a backend failing while a region closes.
  void fail_next_region_end(std::string message) { region_end_failure_ = std::move(message); }

  std::size_t flush_count() const { return flushes_; }      // L2 flushes so far
  std::size_t session_count() const { return sessions_; }  // sessions opened so far
  bool session_open() const { return open_; }              // a session is open now

  std::vector<MetricSpec> metrics() const override;
  SessionInfo describe() const override;
  DeviceControl* device_control() override { return &device_; }
  CallObserver* call_observer() override { return &calls_; }
  PcSampler* pc_sampler() override { return &pc_sampler_; }
  void begin_session(const Settings& settings) override;
  void end_session() noexcept override;
  std::size_t max_batch_runs() const override { return max_batch_runs_; }
  bool batch_has_room() const override;
  void begin_batch(std::size_t runs) override;
  void begin_run(const RunContext& run) override;
  void flush_cache() override;
  void synchronize() override;
  void region_begin(const RegionContext& region) override;
  void region_end(const RegionContext& region) override;
  void end_run(const RunContext& run, const std::vector<RegionRecord>& regions) override;
  bool another_pass_needed() override;
  std::vector<RunMeasurement> collect_batch() override;
  void abandon_run(const RunContext& run) noexcept override;

 private:
  friend class SimulatedCalls;
  friend class SimulatedPcSampler;
  struct Launch {
    std::ptrdiff_t region;  // -1 outside any region
    std::string name;
    double duration_ns;
    GpuInterval gpu_time;
    bool after_return = false;  // launched after its region's call returned
    std::uintptr_t stream = 0;  // the simulated stream's key
    std::uint64_t id = 0;       // its number among the launches, for the call order
    bool unjoined = false;      // the caller's stream was not ordered after it when the call returned
  };
  // The simulated GPU's streams, events and L2 flush, and the engine's StreamJoin over them.
  class Streams;
  // A region timed as a whole (set_region_timing): its start, probe and end events on the simulated
  // GPU, and its first launch.
  struct RegionTiming {
    std::uintptr_t start = 0, probe = 0, stop = 0;
    bool seen = false, gpu_waited = false;
    std::string first_work;
  };
  struct BatchRun {
    std::vector<Launch> launches;
    std::map<std::ptrdiff_t, RegionTiming> timings;  // per region index, when timing regions
    std::size_t regions = 0;
    bool ended = false;
    std::map<std::ptrdiff_t, std::uint64_t> returned_at_ns;  // per region whose call returned: its stream's point
  };
  std::vector<BatchRun> batch_;
  std::size_t current_run_ = 0;  // in the batch
  std::optional<NoiseModel> noise_;
  std::ptrdiff_t current_region_ = -1;
  FakeDevice device_;
  SimulatedDevice simulated_device_;
  std::mutex mutex_;  // launches may come from any thread
  std::unique_ptr<Streams> streams_;  // guarded by mutex_
  bool observing_ = false;       // observe_calls(): launches carry the call's flags
  bool returned_ = false;        // the open region's call has returned
  std::uint64_t returned_at_ns_ = 0;  // where the caller's stream was then
  std::size_t persisting_l2_bytes_ = 0;
  std::size_t persisting_resets_ = 0;
  std::uint64_t launches_ = 0;
  SimulatedCalls calls_{*this};
  SimulatedPcSampler pc_sampler_{*this};
  // Line sampling: what the open region is, and what was sampled so far.
  void sample_launch(const std::string& kernel_name, double duration_ns);  // with mutex_ held
  std::optional<LineSampling> sampling_;
  std::string sampling_denied_;
  bool sass_metrics_supported_ = true;
  std::uint64_t dropped_per_launch_ = 0;
  std::map<std::string, std::vector<SimulatedInstruction>> code_;
  std::map<std::string, std::string> source_texts_;
  std::string region_name_;
  std::size_t region_config_ = 0;
  bool region_sampled_ = false;  // a recorded run's region in its first pass
  SampledCode sampled_;
  std::function<void()> during_synchronize_;
  std::size_t passes_ = 1;
  std::size_t pass_ = 1;
  std::size_t max_batch_runs_ = 1;
  std::size_t batch_launches_ = std::numeric_limits<std::size_t>::max();
  std::string region_end_failure_;
  std::vector<std::size_t> batch_sizes_;
  std::size_t flushes_ = 0;
  std::size_t sessions_ = 0;
  bool open_ = false;
  bool region_timing_ = false;  // as set for the next session
  bool timing_regions_ = false;  // in this session
};

}  // namespace kscope::testing

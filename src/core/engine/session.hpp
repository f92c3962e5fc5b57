#pragma once
// One profiling session over a sweep, on one backend in this process. Each phase is a method:
//   open            the output prefix's claim, backend session, clock lock, session facts; with
//                   the energy metrics the idle power and the L2 flush's energy (core/control/energy_meter.hpp)
//   measure_config  per config: batches of runs until the sampling plan stops
//     run_batch       the batch planner's runs, pass after pass (thermal guard and clocks before
//                     each run of pass 1)
//     call_body       one call of the body for one run and pass
//     record_batch    collect, attribute, aggregate; the plan decides after each recorded run
//   With the energy metrics the recorded runs go back to back in windows (open_window,
//   close_window), and each window, folded into one sample, is what the plan counts.
//   finish          statistics, normalization, files
// A failure stops the sweep with a SweepError carrying everything recorded before it; Ctrl-C stops
// it at the end of the run in progress with a SweepInterrupted carrying the same. With an output
// prefix, each finished config's samples are streamed to disk (SampleStream), and a resumed
// session measures only the configs not finished there.
#include <cstddef>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/engine/aggregator.hpp"
#include "core/engine/batch_planner.hpp"
#include "core/control/clock_lock.hpp"
#include "core/control/energy_meter.hpp"
#include "core/engine/info_collection.hpp"
#include "core/model/interrupt_scope.hpp"
#include "core/files/output_claim.hpp"
#include "core/engine/progress_reporter.hpp"
#include "core/engine/repetition_window.hpp"
#include "core/engine/run_recorder.hpp"
#include "core/engine/sample_stream.hpp"
#include "core/engine/sampling_plan.hpp"
#include "core/control/thermal_guard.hpp"
#include "kscope/errors.hpp"
#include "kscope/measurement_backend.hpp"
#include "kscope/profile.hpp"

namespace kscope::detail {

// What a caller inside kscope adds to a session (evaluate(): its attribution rule, and every run's
// measurement before it is attributed, warm-ups included).
struct SessionHooks {
  ResultKind kind = ResultKind::sweep;  // what the files under the output prefix are claimed and recorded as
  AttributionRules attribution;
  std::function<void(const RunContext&, const std::vector<RegionRecord>&, const RunMeasurement&)> on_run_measured;
  bool single_runs_by_design = false;  // rows of one run are the caller's plan: no runs=1 warning
  // Prefix files the caller writes itself once the session is over (an evaluation's results file,
  // with its verdicts), instead of the session's writing them first.
  std::vector<std::string> written_after;
};

class Session {
 public:
  // The settings must have passed check_request() and the backend check_backend_measures()
  // (core/engine/request_checks.hpp); the caller holds the SessionGuard.
  Session(std::vector<Config> configs, const Settings& settings, const Body& body, MeasurementBackend& backend,
          SessionHooks hooks = {});
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  Results run();

 private:
  // A run whose body has returned in pass 1, waiting for its other passes and its collection.
  struct BatchRun {
    RunContext context;
    std::vector<RegionRecord> regions;
    ClockReading before;
    double started_s;
    std::vector<std::vector<Cell>> info;  // per region: the info collectors' values
  };
  // Why runs could not be recorded: which runs, and the exception.
  struct RunsFailed {
    std::string runs;
    std::exception_ptr cause;
  };

  void open();
  void open_energy();
  void measure_config(const Config& config);
  // Calls the info collectors of a scope that runs before any run (`start`); a failure names them.
  void collect_before_runs(const Config& config, const std::function<void()>& start);
  // True once the sampling plan says the config has enough runs.
  bool run_batch(const Config& config);
  void run_remaining_passes(const Config& config, std::vector<BatchRun>& batch);
  void call_body(const Config& config, const RunContext& run);
  // The thermal guard's pause before a run (or a window), if the GPU is too hot.
  void pause_if_hot(std::size_t run);
  bool record_batch(const Config& config, const std::vector<BatchRun>& batch);
  // Whether another process ran kernels on the GPU since the last ask (warns the first time).
  bool other_processes_ran();
  void open_window(const Config& config);
  // The window's sample into the aggregator; true once the sampling plan says the config has enough.
  bool close_window(const Config& config, const ClockReading& after);
  // After the first config measured, before it counts as finished: fails the sweep when the body
  // opened no annotation (nothing to measure) or not the normalize_against one, instead of
  // after a whole sweep of nothing.
  void check_first_config(const Config& config);
  void finish_config(const Config& config);
  Results finish();
  void check_idle_drift();

  RunContext context_of(const Config& config, std::size_t run, std::size_t batch_index) const;
  std::string run_label(std::size_t run) const;
  // Throws SweepError, or SweepInterrupted when Ctrl-C came first (the failure is then the run
  // that the interrupt cut short: a Python body raising KeyboardInterrupt).
  [[noreturn]] void fail(const Config& config, const std::string& what, std::exception_ptr cause,
                         const std::string& aftermath = "");
  // Throws SweepInterrupted when Ctrl-C asked the sweep to stop.
  void stop_if_interrupted(const Config* config);
  // Writes the finished configs the stream holds back, before a stopped sweep's files replace its
  // samples.csv.
  void settle_stream() noexcept;

  std::vector<Config> configs_;
  const Settings& settings_;
  const Body& body_;
  MeasurementBackend& backend_;
  SessionHooks hooks_;
  DeviceControl* device_;
  std::vector<MetricSpec> metrics_;  // the backend's, then the energy metrics asked for
  RunRecorder recorder_;
  RecorderScope recorder_scope_;
  SamplingPlan plan_;
  std::optional<BatchPlanner> batches_;  // from open(): it needs the backend's replay passes
  ThermalGuard thermal_;
  Aggregator aggregator_;
  InfoCollection collection_;
  std::unique_ptr<ProgressReporter> progress_;
  SessionInfo info_;
  std::optional<ClockLock> clock_lock_;
  std::optional<InterruptScope> interrupt_;  // after the clock lock: Ctrl-C reaches it first
  std::optional<OutputClaim> claim_;         // the output prefix, until the last file is written
  std::optional<SampleStream> stream_;
  std::optional<EnergyMeter> energy_;  // with the energy metrics
  double expected_sm_mhz_ = 0;
  bool backend_open_ = false;
  bool other_process_warned_ = false;

  // Where a config's wall time went, for the debug log: kscope's own cost, seen per config.
  struct ConfigTime {
    double started_s = 0, bodies_s = 0, collect_s = 0, record_s = 0;
    std::size_t batches = 0;
  } time_;

  bool first_config_checked_ = false;
  std::set<std::string> first_config_annotations_;  // what the body opened in the first config

  // The config being measured.
  std::size_t next_run_ = 0;  // warm-ups included
  std::optional<bool> converged_;
  std::size_t pauses_before_config_ = 0;
  // Its energy windows: those closed, and the one in progress (from run window_first_run_).
  std::size_t windows_ = 0;
  std::optional<RepetitionWindow> window_;
  std::size_t window_first_run_ = 0;
  ClockReading window_before_;
  std::vector<std::vector<Cell>> window_info_;  // its first run's info collector values
};

}  // namespace kscope::detail

#pragma once
// Everything that shapes a profiling session, with the defaults an experienced user expects.
#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "kscope/backend.hpp"
#include "kscope/config.hpp"
#include "kscope/info_collector.hpp"
#include "kscope/progress.hpp"
#include "kscope/roofline.hpp"
#include "kscope/shard.hpp"
#include "kscope/stopping_rule.hpp"
#include "kscope/work.hpp"

namespace kscope {

// What one result measures: a kernel, or a whole annotated region (as Nsight Compute's replay modes).
enum class ReplayMode {
  kernel,  // one result per kernel; several in one region need combine_kernel_metrics
  // One result per region (Kernel column "range"), covering all its kernels and the gaps between
  // them: counters and ncu measure the region as one range, cupti as the span from its first
  // kernel's start to its last kernel's end; events always measure the region.
  range,
};

enum class CacheControl {
  all,   // flush the L2 before every measured region (cold cache)
  none,  // leave the cache as the previous work left it (warm)
};

enum class ClockControl {
  none,  // leave the GPU's clocks alone (boost allowed)
  base,  // lock the SM clock to base (rated TDP) through NVML for the session (needs root); always restored
};

// The measurement modes (named by mode_name below): each sets cache_control and clock_control.
enum class Preset {
  default_profiling,  // all / none: cold cache, boost allowed
  strict,             // all / base: no frequency jitter, for strict reproduction
  continuous,         // none / none: warm cache, as in an inference pipeline
};

// Whether throttled runs enter the statistics. They are always flagged in the samples and counted
// in ThrottledRuns.
enum class ThrottledRuns { keep, exclude };

enum class Verbosity { quiet, info, debug };

// Pausing before a run while the GPU is close to its thermal limit (as Nsight Python's thermovision).
enum class ThermalMode {
  automatic,  // start from wait/cont and adapt cont (12..50 °C) to how fast the GPU heats up
  manual,     // fixed thresholds
  off,
};

// What an info collector that throws does (kscope/info_collector.hpp).
enum class InfoCollectorErrors {
  warn,   // its value is missing (an empty cell) where it failed, with one warning per collector; the sweep goes on
  raise,  // the sweep fails with a SweepError naming the collector, as the body's exception would
};

// How many recorded runs each config gets.
enum class Sampling {
  fixed,     // exactly Settings::runs
  adaptive,  // until the statistics converge (Settings::adaptive), within time budgets
};

// When adaptive sampling (Sampling::adaptive) stops running a config.
struct AdaptiveSampling {
  StopCriterion criterion = StopCriterion::ci_halfwidth;  // the stopping rule whose spread must fall below target_pct
  double target_pct = 1.0;        // for every measured (annotation, metric) of the config
  std::size_t min_runs = 10;      // runs before the target is checked
  std::size_t max_runs = 100000;  // runs after which a config stops, converged or not
  double config_budget_s = 1.0;   // wall time per config; a config out of budget is "not converged"
  double timeout_s = 600.0;       // wall time for the whole sweep
};

std::string to_string(CacheControl c);
std::string to_string(ClockControl c);
std::string to_string(ReplayMode r);
// "default", "strict", "continuous", or "custom" (cache none with clocks locked).
std::string mode_name(CacheControl cache, ClockControl clock);

// A value computed from one run's measured values (and the config), e.g. bandwidth from a duration.
struct DerivedValue {
  std::string name;  // the Metric column
  double value;      // this run's value
  std::string unit;  // the Unit column
};

// The measured values of one annotation in one run, by metric name, in the backend's metric order.
class MeasuredValues {
 public:
  // Made by the engine for each derive_metric call.
  MeasuredValues(const std::vector<std::string>* names, const std::vector<double>* values)
      : names_(names), values_(values) {}
  double operator[](const std::string& metric) const;  // throws ConfigError for an unknown metric
  double front() const { return values_->front(); }     // the first (often only) metric
  const std::vector<std::string>& names() const { return *names_; }  // the metrics, in order
  const std::vector<double>& values() const { return *values_; }        // one per metric, in that order

 private:
  const std::vector<std::string>* names_;
  const std::vector<double>* values_;
};

using DeriveMetric = std::function<std::vector<DerivedValue>(const MeasuredValues&, const Config&)>;
// Reduces the values of several kernels of one region, pairwise (e.g. std::plus<double>{}).
using CombineKernels = std::function<double(double, double)>;

// The most runs (or warm-up runs) per config a Settings may ask for.
inline constexpr std::size_t kMaxRunsPerConfig = 1'000'000'000;

// Everything that shapes a profiling session: runs, backend and metrics, cache and clock control,
// derived metrics, sampling, the thermal guard, files, shards. The defaults are the measurement
// an experienced user expects: 10 runs after 1 warm-up, kernel durations, a cold L2.
struct Settings {
  std::size_t runs = 10;          // recorded runs per config
  std::size_t warmup_runs = 1;    // runs per config before recording (module load, caches, clocks)
  Backend backend = Backend::from_metrics;  // what measures; by default chosen from the metrics (chosen_backend)
  std::vector<std::string> metrics;  // metric names (Nsight Compute's for counters); empty = the backend's default
  ReplayMode replay_mode = ReplayMode::kernel;  // a result per kernel, or per region (range)
  // Backend::ncu only: Nsight Compute sections collected into the kept .ncu-rep (e.g.
  // "SpeedOfLight", "MemoryWorkloadAnalysis"), for its GUI; the table holds `metrics`.
  std::vector<std::string> ncu_sections;
  CacheControl cache_control = CacheControl::all;  // all: the L2 flushed before every region; none: left warm
  ClockControl clock_control = ClockControl::none;  // none: clocks left alone; base: the SM clock locked to base
  Verbosity verbosity = Verbosity::info;  // quiet, info (progress and warnings) or debug
  // If set, receives the progress (kscope/progress.hpp) that would otherwise be printed; debug lines
  // are still printed. Not called with Verbosity::quiet.
  ProgressObserver progress_observer;
  int device = -1;                // CUDA ordinal; -1 = the current device when profile() starts

  CombineKernels combine_kernel_metrics;      // several kernels in one region: reduce them
  std::vector<std::string> ignore_kernel_list;  // kernels dropped before attribution (exact name)
  DeriveMetric derive_metric;  // per run, before aggregation: values computed from the measured ones
  std::string normalize_against;              // annotation whose AvgValue divides the others'
  // The bytes and FLOPs each annotation must move and do at each config (kscope/work.hpp), called
  // once per annotation and config: its duration rows then carry the roofline columns
  // (kscope/roofline.hpp; docs/roofline.md).
  DeclaredWork work;
  BoundThresholds bound_thresholds;           // when such a row is memory-, compute- or latency-bound

  Sampling sampling = Sampling::fixed;  // fixed: `runs` runs; adaptive: until `adaptive` is met
  AdaptiveSampling adaptive;  // when adaptive sampling stops

  ThermalMode thermal_mode = ThermalMode::automatic;  // the thermal guard: automatic, manual or off
  double thermal_wait_c = 10.0;     // pause when the T.Limit margin falls to this (°C)
  double thermal_cont_c = 20.0;     // resume when it is back to this
  double thermal_timeout_s = 180.0; // longest pause

  ThrottledRuns throttled_runs = ThrottledRuns::keep;  // whether throttled runs enter the statistics

  // Callbacks whose values become extra columns (kscope/info_collector.hpp); not with Backend::ncu.
  std::vector<InfoCollector> info_collectors;
  InfoCollectorErrors info_collector_errors = InfoCollectorErrors::warn;  // as Nsight Python

  double stable_rsd_pct = 2.0;    // StableMeasurement = RelativeStdDevPct below this
  // With the energy metrics (kscope/energy.hpp) in `metrics`: each recorded run is a window in which
  // the body runs back to back for at least this long (the energy counter updates every ~0.1 s).
  double energy_window_s = 1.0;
  // If set: <prefix>summary.csv and <prefix>results.json at the end; <prefix>samples.csv (raw
  // samples), <prefix>manifest.json and <prefix>progress.jsonl written as the sweep goes, each
  // config's samples on disk once it finishes (Backend::ncu: everything at the end); <prefix>lock
  // while the sweep runs, so that a second process on the same prefix is refused. The directory
  // must exist and be writable.
  std::string output_prefix;
  // Continue the sweep streamed under output_prefix (after a kill or an interrupt): the configs
  // finished there are read back, not measured again. Refused (ConfigError) when the files hold
  // another GPU, backend, sweep or measurement settings; with nothing there, every config is measured.
  bool resume = false;
  // With output_prefix, each config's samples reach the operating system as soon as the config
  // finishes, so a killed process (SIGKILL, a crash, the OOM killer) loses at most the config in
  // flight. They are flushed to the disk (fdatasync) at most this often, so a power loss or an OS
  // crash loses at most the configs finished in the last fsync_interval_s seconds. 0: after every
  // config (each flush costs about a millisecond on a local disk: much more than a short config).
  double fsync_interval_s = 1.0;
  // Replace the files of an earlier sweep under output_prefix. Without it (and without resume) a
  // finished sweep there is moved aside to numbered backups (<file>.~N~) and an unfinished one
  // refused before anything runs: kscope never deletes measured data unasked. Another kind of
  // result there (an evaluation, a race, merged results) is refused whatever this says.
  bool overwrite = false;
  // Measure only this shard's configs (kscope/shard.hpp), its files under output_prefix +
  // "shard-<index>-of-<count>-"; kscope::merge joins the shards. Unset: the environment variable
  // KSCOPE_SHARD=index/count, if set; else the whole sweep.
  std::optional<Shard> shard;

  // Sets cache_control and clock_control as the preset says.
  Settings& apply(Preset preset);
  // Throws ConfigError naming the bad field and its fix; profile() calls it before touching the GPU,
  // and also checks `metrics` against what the backend measures.
  void validate() const;
};

// The backend a profile() call with these settings measures with: Settings::backend, or for
// Backend::from_metrics the one the metrics ask for: cupti when Settings::metrics is empty or holds
// only cupti__kernel_duration, events when it holds only events__region_duration, otherwise
// counters (Nsight Compute metric names, with ncu's meaning, measured in this process; where the
// counters are not permitted the call fails naming the fix rather than measuring durations instead).
// The energy metrics (kscope/energy.hpp) go with either duration backend and leave the choice to
// the other names (cupti when there are none).
// Throws ConfigError when the metrics mix a duration backend's metric with other names.
Backend chosen_backend(const Settings& settings);

}  // namespace kscope

#include "core/engine/session.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <thread>
#include <utility>

#include "base/elapsed.hpp"
#include "core/model/caller_language.hpp"
#include "core/model/exception_message.hpp"
#include "core/model/log.hpp"
#include "core/engine/outcome.hpp"
#include "core/engine/request_checks.hpp"
#include "core/files/start_stamp.hpp"
#include "core/model/suggest.hpp"
#include "core/control/throttle.hpp"
#include "kscope/energy.hpp"

namespace kscope::detail {
namespace {

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

ClockReading read_clocks(DeviceControl* device) { return device ? device->clocks() : ClockReading{}; }

std::string pids_of(const std::vector<unsigned>& pids) {
  std::string out;
  for (unsigned pid : pids) out += (out.empty() ? "" : ", ") + std::to_string(pid);
  return out;
}

std::string names_of(const std::vector<RegionRecord>& regions) {
  std::string out;
  for (const auto& r : regions) out += (out.empty() ? "'" : ", '") + r.name + "'";
  return out.empty() ? "none" : out;
}

}  // namespace

Session::Session(std::vector<Config> configs, const Settings& settings, const Body& body, MeasurementBackend& backend,
                 SessionHooks hooks)
    : configs_(std::move(configs)),
      settings_(settings),
      body_(body),
      backend_(backend),
      hooks_(std::move(hooks)),
      device_(backend.device_control()),
      metrics_(session_metrics(backend, settings)),
      recorder_(backend, settings.cache_control == CacheControl::all),
      recorder_scope_(recorder_),
      plan_(settings, now_s()),
      thermal_(
          settings, [this] { return device_ ? device_->thermal_margin_c() : std::nullopt; },
          [](double s) {
            // Ctrl-C ends a pause at once: the run it delays has not started.
            if (interrupt_requested()) throw std::runtime_error("the thermal guard was pausing for the GPU to cool");
            std::this_thread::sleep_for(std::chrono::duration<double>(s));
          },
          now_s),
      aggregator_(configs_, metrics_, settings, hooks_.attribution, hooks_.single_runs_by_design),
      collection_(settings.info_collectors, settings.info_collector_errors),
      progress_(make_stderr_progress(settings.verbosity, configs_.size(), settings.warmup_runs + plan_.expected_runs(),
                                     settings.progress_observer)) {
  if (!collection_.empty())
    recorder_.on_open([this](std::size_t region, const std::string& name) { collection_.annotation_opened(region, name); });
}

Session::~Session() {
  interrupt_.reset();   // the clock lock's signal handling is back before the clock lock goes
  clock_lock_.reset();  // clocks come back before the backend lets the device go
  if (backend_open_) backend_.end_session();
}

Results Session::run() {
  open();
  collect_before_runs(configs_.front(), [this] { collection_.collect_once(); });
  for (const Config& config : configs_) {
    if (settings_.shard && !settings_.shard->measures(config.index())) continue;
    if (stream_ && stream_->finished(config.index())) continue;
    measure_config(config);
    if (!first_config_checked_) check_first_config(config);
    finish_config(config);
  }
  stop_if_interrupted(nullptr);
  return finish();
}

void Session::open() {
  if (!settings_.output_prefix.empty()) claim_.emplace(settings_, hooks_.kind);  // before the GPU is touched
  backend_.begin_session(settings_);
  backend_open_ = true;
  info_ = backend_.describe();
  stamp_start(info_);
  info_.cache_control = settings_.cache_control;
  info_.clock_control = settings_.clock_control;
  if (settings_.clock_control == ClockControl::base) {
    if (!device_)
      throw BackendError(option("clock_control") + " base needs NVML to lock the clocks, and this backend has no "
                         "device control; use clock_control none");
    clock_lock_.emplace(*device_);
    info_.locked_sm_clock_mhz = clock_lock_->locked_clocks().sm_mhz;
    info_.locked_memory_clock_mhz = clock_lock_->locked_clocks().memory_mhz;
  }
  if (settings_.shard && settings_.shard->count > 1) {
    std::size_t mine = 0;
    for (const Config& c : configs_) mine += settings_.shard->measures(c.index());
    log_info("measuring shard " + settings_.shard->to_string() + " of the sweep: " + std::to_string(mine) + " of its " +
             std::to_string(configs_.size()) + " configs");
  }
  expected_sm_mhz_ = clock_lock_ ? info_.locked_sm_clock_mhz : info_.rated_sm_clock_mhz;
  batches_.emplace(settings_, info_.replay_passes);
  if (metrics_.size() > aggregator_.kernel_metrics()) open_energy();
  if (!settings_.output_prefix.empty()) stream_.emplace(settings_, configs_, info_, metrics_, aggregator_, hooks_.kind);
  interrupt_.emplace();
}

void Session::open_energy() {
  EnergyCounter* counter = device_ ? device_->energy_counter() : nullptr;
  if (!counter)
    throw BackendError("the energy metrics read the GPU's energy counter through NVML, which the " +
                       to_string(info_.backend) + " backend does not reach. Measure without the nvml__ energy metrics");
  energy_.emplace(*counter, settings_.energy_window_s);
  const bool flushes = settings_.cache_control == CacheControl::all;
  energy_->calibrate([this] { backend_.flush_cache(); }, [this] { backend_.synchronize(); }, flushes);
  const EnergyCalibration& c = energy_->calibration();
  info_.idle_power_w = c.idle_power_w;
  info_.flush_energy_j = flushes ? c.flush_energy_j : NAN;
  info_.energy_update_s = c.update_period_s;
  log_info("energy: idle power " + fixed(c.idle_power_w, 1) + " W, energy counter updated every " +
           fixed(c.update_period_s * 1e3, 0) + " ms" +
           (flushes ? ", one L2 flush " + fixed(c.flush_energy_j * 1e3, 2) + " mJ in " +
                          fixed(c.flush_time_s * 1e6, 1) + " us (taken out of each run)"
                    : ""));
}

void Session::measure_config(const Config& config) {
  progress_->config_started(config.index(), config.to_string());
  plan_.start_config(now_s());
  next_run_ = 0;
  windows_ = 0;
  window_.reset();
  converged_.reset();
  pauses_before_config_ = thermal_.pauses();
  time_ = {now_s()};
  collect_before_runs(config, [&] { collection_.start_config(config); });
  while (!run_batch(config)) {
  }
}

void Session::collect_before_runs(const Config& config, const std::function<void()>& start) {
  try {
    start();
  } catch (...) {
    fail(config, collection_.failure() + ", before its first run", std::current_exception());
  }
}

bool Session::run_batch(const Config& config) {
  stop_if_interrupted(&config);
  // With the energy metrics the recorded runs are the runs of windows, as many as fill a window.
  const bool in_window = energy_ && next_run_ >= settings_.warmup_runs;
  if (in_window && !window_) open_window(config);
  const std::size_t run_limit =
      in_window ? std::numeric_limits<std::size_t>::max() : settings_.warmup_runs + plan_.max_runs();
  const BatchPlanner::Batch planned = batches_->next(next_run_, run_limit, backend_.max_batch_runs());
  if (planned.runs == 0)
    throw InternalError("the sampling plan asked for more than its " + std::to_string(run_limit) +
                        " runs (kscope bug: please report it with this message)");
  std::vector<BatchRun> batch;
  backend_.begin_batch(planned.runs);
  // Pass 1 decides how many runs the batch holds; later passes repeat those runs.
  for (std::size_t k = 0; k < planned.runs; ++k) {
    const std::size_t run = next_run_ + k;
    RunContext context = context_of(config, run, k);
    try {
      if (!in_window) pause_if_hot(run);  // a window pauses before it opens, never between its runs
      RunContext collected = context;
      collected.recorded = context.recorded && (!in_window || run == window_first_run_);  // a window's first run
      collection_.start_run(config, collected);
      const ClockReading before = read_clocks(device_);
      const double started_s = now_s();
      call_body(config, context);
      if (!first_config_checked_)
        for (const RegionRecord& r : recorder_.regions()) first_config_annotations_.insert(r.name);
      batch.push_back({context, recorder_.regions(), before, started_s, collection_.end_run(recorder_.regions().size())});
    } catch (...) {
      const std::exception_ptr cause = std::current_exception();
      const std::string collector = collection_.failure();
      collection_.end_run(0);  // the failed run collects nothing more
      std::string aftermath;
      // The runs that ended before it in this batch are kept: they get their remaining passes.
      if (!batch.empty()) {
        try {
          run_remaining_passes(config, batch);
          record_batch(config, batch);
        } catch (const RunsFailed& kept) {
          aftermath = "; the runs before it could not be kept either (" + kept.runs + ": " +
                      exception_message(kept.cause) + ")";
        }
      }
      fail(config, run_label(run) + (collector.empty() ? "" : ", in " + collector), cause, aftermath);
    }
    if (interrupt_requested() || now_s() - batch.front().started_s >= planned.max_age_s || !backend_.batch_has_room() ||
        (energy_ && run + 1 == settings_.warmup_runs) || (in_window && energy_->window_full()))
      break;
  }
  try {
    run_remaining_passes(config, batch);
    next_run_ += batch.size();
    if (record_batch(config, batch)) return true;
    // Closed here, not in record_batch: after a failed run a window is incomplete, never closed.
    return window_ && energy_->window_full() && close_window(config, read_clocks(device_));
  } catch (const RunsFailed& failed) {
    fail(config, failed.runs, failed.cause);
  }
}

void Session::run_remaining_passes(const Config& config, std::vector<BatchRun>& batch) {
  std::size_t pass = 1;
  const BatchRun* current = &batch.front();
  try {
    while (backend_.another_pass_needed()) {
      ++pass;
      for (const BatchRun& b : batch) {
        current = &b;
        RunContext context = b.context;
        context.pass = pass;
        call_body(config, context);
        const auto& regions = recorder_.regions();
        const auto same_name = [](const RegionRecord& x, const RegionRecord& y) { return x.name == y.name; };
        if (!std::equal(b.regions.begin(), b.regions.end(), regions.begin(), regions.end(), same_name))
          throw AnnotationUseError("replay pass " + std::to_string(pass) + " opened other regions (" + names_of(regions) +
                                   ") than the first pass (" + names_of(b.regions) +
                                   "); with metrics that need several passes the body must open the same "
                                   "annotations in the same order every time");
      }
    }
  } catch (...) {
    const std::string dropped =
        batch.size() > 1 ? " (the " + std::to_string(batch.size()) + " runs of its batch are dropped: each needs every pass)"
                         : "";
    throw RunsFailed{"replay pass " + std::to_string(pass) + " of " + run_label(current->context.run) + dropped,
                     std::current_exception()};
  }
}

void Session::pause_if_hot(std::size_t run) {
  if (const double paused = thermal_.before_run(); paused > 0) {
    info_.thermal_pauses = thermal_.pauses();
    info_.thermal_pause_s = thermal_.paused_seconds();
    log_debug("thermal guard paused " + std::to_string(paused) + " s before " + run_label(run));
  }
}

void Session::call_body(const Config& config, const RunContext& run) {
  const TimeInto timed(time_.bodies_s);
  recorder_.begin_run(run);
  try {
    backend_.begin_run(run);
    body_(config);
    recorder_.end_run();
    backend_.end_run(run, recorder_.regions());
  } catch (const RegionCloseError& e) {
    backend_.abandon_run(run);
    try {
      std::rethrow_exception(e.cause);
    } catch (const Error& cause) {
      throw AnnotationError("annotation '" + e.region + "' could not be closed: " + cause.what());
    }
  } catch (...) {
    backend_.abandon_run(run);
    throw;
  }
}

bool Session::record_batch(const Config& config, const std::vector<BatchRun>& batch) {
  std::vector<RunMeasurement> measured;
  ++time_.batches;
  std::optional<TimeInto> timed(time_.collect_s);
  const std::string runs = batch.size() == 1 ? run_label(batch.front().context.run)
                                             : run_label(batch.front().context.run) + " to " +
                                                   run_label(batch.back().context.run);
  try {
    measured = backend_.collect_batch();
    if (measured.size() != batch.size())
      throw InternalError("the backend returned " + std::to_string(measured.size()) + " runs for a batch of " +
                          std::to_string(batch.size()) + " (kscope bug: please report it with this message)");
  } catch (...) {
    throw RunsFailed{runs, std::current_exception()};
  }
  const ClockReading collected = read_clocks(device_);
  const bool other_process = other_processes_ran();
  timed.emplace(time_.record_s);
  for (std::size_t i = 0; i < batch.size(); ++i) {
    const BatchRun& b = batch[i];
    if (hooks_.on_run_measured) hooks_.on_run_measured(b.context, b.regions, measured[i]);
    if (b.context.recorded && window_) {
      try {
        window_->add(b.regions, measured[i]);
      } catch (...) {
        throw RunsFailed{run_label(b.context.run), std::current_exception()};
      }
      if (b.context.run == window_first_run_) window_info_ = b.info;
      continue;
    }
    // A batched run's closing reading is the next run's opening one.
    const ClockReading after = i + 1 < batch.size() ? batch[i + 1].before : collected;
    if (b.context.recorded) {
      try {
        aggregator_.add_run({config.index(), b.context.recorded_run, b.regions, measured[i], b.before, after,
                             is_throttled(b.before, after, expected_sm_mhz_), &b.info, other_process});
      } catch (...) {
        throw RunsFailed{run_label(b.context.run), std::current_exception()};
      }
    } else {
      try {
        // Warm-ups follow the region rules too, so a broken body fails before anything is recorded.
        aggregator_.check_run(b.regions, measured[i]);
      } catch (...) {
        throw RunsFailed{run_label(b.context.run), std::current_exception()};
      }
    }
    progress_->run_finished();
    if (!b.context.recorded) continue;
    using Verdict = SamplingPlan::Verdict;
    const Verdict v = plan_.after_run(b.context.recorded_run + 1, aggregator_.current_config_series(), now_s());
    if (v == Verdict::more) continue;
    if (v != Verdict::done) converged_ = v == Verdict::converged;
    return true;  // the batch's runs past this one were measured speculatively: dropped
  }
  return false;
}

void Session::open_window(const Config& config) {
  try {
    pause_if_hot(next_run_);
  } catch (...) {
    fail(config, run_label(next_run_), std::current_exception());
  }
  window_.emplace(aggregator_.kernel_metrics(), settings_);
  window_first_run_ = next_run_;
  window_info_.clear();
  window_before_ = read_clocks(device_);
  energy_->open_window();
}

bool Session::close_window(const Config& config, const ClockReading& after) {
  const std::size_t runs = window_->runs();
  const bool flushed = settings_.cache_control == CacheControl::all;  // before its one region, every run
  const EnergyPerRun e = energy_->close_window(runs, flushed ? runs : 0);
  std::vector<double> energy;
  for (std::size_t m = aggregator_.kernel_metrics(); m < metrics_.size(); ++m)
    energy.push_back(metrics_[m].name == kEnergyPerRun   ? e.energy_j
                     : metrics_[m].name == kAveragePower ? e.average_power_w
                                                         : e.above_idle_j);
  const std::string window = "window " + std::to_string(windows_ + 1) + " (" + std::to_string(runs) + " runs)";
  try {
    const RunMeasurement folded;  // the window's sample comes attributed
    aggregator_.add_regions({config.index(), windows_, window_->regions(), folded, window_before_, after,
                             is_throttled(window_before_, after, expected_sm_mhz_), &window_info_,
                             other_processes_ran()},
                            window_->sample(energy));
  } catch (...) {
    throw RunsFailed{window, std::current_exception()};
  }
  log_debug("energy " + window + ": " + fixed(e.energy_j * 1e3, 3) + " mJ per run, " + fixed(e.average_power_w, 1) +
            " W, " + fixed(e.run_time_s * 1e6, 2) + " us per run");
  window_.reset();
  progress_->run_finished();
  using Verdict = SamplingPlan::Verdict;
  const Verdict v = plan_.after_run(++windows_, aggregator_.current_config_series(), now_s());
  if (v == Verdict::more) return false;
  if (v != Verdict::done) converged_ = v == Verdict::converged;
  return true;
}

bool Session::other_processes_ran() {
  const std::vector<unsigned> others = device_ ? device_->other_processes() : std::vector<unsigned>{};
  if (!others.empty() && !other_process_warned_) {
    other_process_warned_ = true;
    log_warning("another process ran kernels on this GPU while kscope measured (pid " + pids_of(others) +
                    ", as NVML names it): the runs it touched are flagged (OtherProcess in the samples, "
                    "OtherProcessRuns in the summary), since its kernels share the GPU with yours. Measure on a GPU "
                    "of your own",
                WarningKind::run);
  }
  return !others.empty();
}

void Session::check_first_config(const Config& config) {
  first_config_checked_ = true;
  const std::string runs = "its " + std::to_string(next_run_) + (next_run_ == 1 ? " run" : " runs");
  if (first_config_annotations_.empty())
    fail(config, runs,
         std::make_exception_ptr(KernelCountError(
             "No kernels were profiled: the body opened no annotation in any of them, so nothing was measured. "
             "Mark the code to measure with " +
             spell("kscope::Annotation a(\"name\"); at the top of the scope that launches its kernels (or "
                   "kscope::annotate(\"name\", fn))",
                   "'with kscope.annotate(\"name\"):' around its kernel launches (or @kscope.annotate(\"name\") on a "
                   "function the body calls)"))));
  const std::string& baseline = settings_.normalize_against;
  if (!baseline.empty() && !first_config_annotations_.count(baseline)) {
    const std::vector<std::string> recorded(first_config_annotations_.begin(), first_config_annotations_.end());
    const auto closest = closest_names(baseline, recorded, 1);
    fail(config, runs,
         std::make_exception_ptr(ConfigError(
             option("normalize_against") + " names annotation '" + baseline + "', which the body did not open (it " +
             "opened " + quoted_list(recorded) + "): each row is divided by that annotation's AvgValue at its config, "
             "so a config without it has no rows. Name one of the annotations the body opens" +
             (closest.empty() ? std::string() : " (did you mean '" + closest.front() + "'?)"))));
  }
}

void Session::finish_config(const Config& config) {
  if (log_enabled(LogLevel::debug)) {
    const auto ms = as_milliseconds;
    log_debug("config " + std::to_string(config.index() + 1) + "/" + std::to_string(configs_.size()) + ": " +
              std::to_string(next_run_) + " runs in " + std::to_string(time_.batches) + " batches, " +
              ms(now_s() - time_.started_s) + ": bodies " + ms(time_.bodies_s) +
              " (the body's calls with kscope's per-run work), collecting " + ms(time_.collect_s) +
              " (waiting for the GPU and the backend's records), recording " + ms(time_.record_s));
  }
  aggregator_.set_config_outcome(config.index(), converged_, thermal_.pauses() - pauses_before_config_);
  if (stream_) {
    try {
      stream_->config_finished(config.index(), aggregator_);
    } catch (...) {
      fail(config, "writing its samples under " + settings_.output_prefix, std::current_exception());
    }
  }
  progress_->config_finished();
}

Results Session::finish() {
  if (energy_) check_idle_drift();
  progress_->finished();
  bool samples_on_disk = false;
  if (stream_) {
    try {
      stream_->sync();
      samples_on_disk = true;
    } catch (const Error&) {  // then samples.csv is written whole again, and a failure of that is reported
    }
  }
  return final_results(aggregator_, info_, settings_, configs_.size(), samples_on_disk, hooks_.written_after);
}

void Session::settle_stream() noexcept {
  if (!stream_) return;
  try {
    stream_->sync();
  } catch (const Error&) {  // the files written whole next hold them
  }
}

void Session::check_idle_drift() {
  constexpr double kDriftPct = 5;
  const double start_w = info_.idle_power_w, end_w = energy_->measure_idle_power_w();
  const double drift_pct = 100 * (end_w - start_w) / start_w;
  const std::string text = "the GPU's idle power was " + fixed(start_w, 1) + " W when the session opened and " +
                           fixed(end_w, 1) + " W at its end";
  if (std::abs(drift_pct) > kDriftPct)
    log_warning(text + " (" + fixed(drift_pct, 1) + "%): " + kEnergyAboveIdle + " used the first, and is uncertain "
                "by the difference times each run's time (a GPU warming up idles higher)");
  else
    log_debug(text);
}

RunContext Session::context_of(const Config& config, std::size_t run, std::size_t batch_index) const {
  RunContext c;
  c.config = config.index();
  c.run = run;
  c.batch_index = batch_index;
  c.recorded = run >= settings_.warmup_runs;
  // With the energy metrics a recorded run belongs to a window, the sample it is recorded in.
  c.recorded_run = !c.recorded ? 0 : energy_ ? windows_ : run - settings_.warmup_runs;
  return c;
}

std::string Session::run_label(std::size_t run) const {
  if (run < settings_.warmup_runs) return "warm-up run " + std::to_string(run + 1);
  if (energy_)
    return "run " + std::to_string(run - window_first_run_ + 1) + " of energy window " + std::to_string(windows_ + 1);
  return "run " + std::to_string(run - settings_.warmup_runs + 1);
}

void Session::fail(const Config& config, const std::string& what, std::exception_ptr cause,
                   const std::string& aftermath) {
  settle_stream();
  if (interrupt_requested())
    throw sweep_interrupted(aggregator_, info_, settings_, &config,
                            "in " + config_label(config, configs_.size()) + " during " + what + ", which is dropped (" +
                                exception_message(cause) + ")" + aftermath);
  throw sweep_failure(aggregator_, info_, settings_, configs_.size(), &config, what, cause, aftermath);
}

void Session::stop_if_interrupted(const Config* config) {
  if (!interrupt_requested()) return;
  settle_stream();
  if (!config) throw sweep_interrupted(aggregator_, info_, settings_, nullptr, "after the last config");
  if (next_run_ == 0)
    throw sweep_interrupted(aggregator_, info_, settings_, nullptr, "before " + config_label(*config, configs_.size()));
  throw sweep_interrupted(aggregator_, info_, settings_, config,
                          "in " + config_label(*config, configs_.size()) + " after " + run_label(next_run_ - 1));
}

}  // namespace kscope::detail

#include "core/session.hpp"

#include <algorithm>
#include <chrono>
#include <thread>
#include <utility>

#include "core/caller.hpp"
#include "core/exception_message.hpp"
#include "core/log.hpp"
#include "core/metric_request.hpp"
#include "core/outcome.hpp"
#include "core/session_guard.hpp"
#include "core/sharding.hpp"
#include "core/throttle.hpp"

namespace kscope::detail {
namespace {

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

ClockReading read_clocks(DeviceControl* device) { return device ? device->clocks() : ClockReading{}; }

std::string names_of(const std::vector<RegionRecord>& regions) {
  std::string out;
  for (const auto& r : regions) out += (out.empty() ? "'" : ", '") + r.name + "'";
  return out.empty() ? "none" : out;
}

}  // namespace

Session::Session(std::vector<Config> configs, const Settings& settings, const Body& body, MeasurementBackend& backend)
    : configs_(std::move(configs)),
      settings_(settings),
      body_(body),
      backend_(backend),
      device_(backend.device_control()),
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
      aggregator_(configs_, backend.metrics(), settings),
      collection_(settings.info_collectors, settings.info_collector_errors),
      progress_(make_stderr_progress(settings.verbosity, configs_.size(), settings.warmup_runs + plan_.expected_runs(),
                                     settings.progress_observer)) {
  std::vector<std::string> measured;
  for (const auto& m : backend.metrics()) measured.push_back(m.name);
  check_requested_metrics(settings.metrics, measured, to_string(backend.describe().backend));
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
    finish_config(config);
  }
  stop_if_interrupted(nullptr);
  return finish();
}

void Session::open() {
  backend_.begin_session(settings_);
  backend_open_ = true;
  info_ = backend_.describe();
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
  if (!settings_.output_prefix.empty()) stream_.emplace(settings_, configs_, info_, backend_.metrics(), aggregator_);
  interrupt_.emplace();
}

void Session::measure_config(const Config& config) {
  progress_->config_started(config.index(), config.to_string());
  plan_.start_config(now_s());
  next_run_ = 0;
  converged_.reset();
  pauses_before_config_ = thermal_.pauses();
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
  const std::size_t run_limit = settings_.warmup_runs + plan_.max_runs();
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
      if (const double paused = thermal_.before_run(); paused > 0) {
        info_.thermal_pauses = thermal_.pauses();
        info_.thermal_pause_s = thermal_.paused_seconds();
        log_debug("thermal guard paused " + std::to_string(paused) + " s before " + run_label(run));
      }
      collection_.start_run(config, context);
      const ClockReading before = read_clocks(device_);
      const double started_s = now_s();
      call_body(config, context);
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
    if (interrupt_requested() || now_s() - batch.front().started_s >= planned.max_age_s || !backend_.batch_has_room())
      break;
  }
  try {
    run_remaining_passes(config, batch);
    next_run_ += batch.size();
    return record_batch(config, batch);
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

void Session::call_body(const Config& config, const RunContext& run) {
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
  for (std::size_t i = 0; i < batch.size(); ++i) {
    const BatchRun& b = batch[i];
    ran_ = true;
    annotated_ = annotated_ || !b.regions.empty();
    // A batched run's closing reading is the next run's opening one.
    const ClockReading after = i + 1 < batch.size() ? batch[i + 1].before : collected;
    if (b.context.recorded) {
      try {
        aggregator_.add_run({config.index(), b.context.recorded_run, b.regions, measured[i], b.before, after,
                             is_throttled(b.before, after, expected_sm_mhz_), &b.info});
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

void Session::finish_config(const Config& config) {
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
  // Nothing was measured, and an empty table would hide it (Nsight Python 1.1.1 raises too).
  if (ran_ && !annotated_)
    throw KernelCountError("No kernels were profiled: no run opened an annotation, so nothing was measured. Mark "
                           "the code to measure with " + spell("kscope::Annotation", "kscope.annotate(...)") +
                           " inside the profiled function");
  progress_->finished();
  bool samples_on_disk = false;
  if (stream_) {
    try {
      stream_->sync();
      samples_on_disk = true;
    } catch (const Error&) {  // then samples.csv is written whole again, and a failure of that is reported
    }
  }
  return final_results(aggregator_, info_, settings_, configs_.size(), samples_on_disk);
}

void Session::settle_stream() noexcept {
  if (!stream_) return;
  try {
    stream_->sync();
  } catch (const Error&) {  // the files written whole next hold them
  }
}

RunContext Session::context_of(const Config& config, std::size_t run, std::size_t batch_index) const {
  RunContext c;
  c.config = config.index();
  c.run = run;
  c.batch_index = batch_index;
  c.recorded = run >= settings_.warmup_runs;
  c.recorded_run = c.recorded ? run - settings_.warmup_runs : 0;
  return c;
}

std::string Session::run_label(std::size_t run) const {
  return run < settings_.warmup_runs ? "warm-up run " + std::to_string(run + 1)
                                     : "run " + std::to_string(run - settings_.warmup_runs + 1);
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

void check_request(const Sweep& sweep, const Settings& settings, const Body& body) {
  sweep.validate();
  settings.validate();
  check_output_prefix(settings);
  check_info_collectors(settings.info_collectors, sweep.names());
  if (!body) throw ConfigError(spell("profile() was given an empty body function", "the profiled function is None"));
}

}  // namespace kscope::detail

namespace kscope {

// In kscope_core, unlike profile(): a program that measures only on its own backend (kscope's CPU
// tests) links no backend factory.
Results profile_with_backend(const Sweep& sweep, const Settings& settings, const Body& body,
                             MeasurementBackend& backend) {
  const Settings sharded = detail::resolve_shard(settings);
  detail::check_request(sweep, sharded, body);
  detail::LogScope log(sharded.verbosity);
  detail::SessionGuard guard;
  return detail::Session(sweep.configs(), sharded, body, backend).run();
}

}  // namespace kscope

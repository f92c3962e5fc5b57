// profile_with_backend: the sweep loop. Every config runs warm-up + recorded runs (a fixed number,
// or adaptively until converged); each run's kernels are attributed to its regions; any failure
// stops the sweep with what was measured so far.
#include <chrono>
#include <iostream>
#include <optional>
#include <set>
#include <thread>
#include <utility>

#include "core/attribution.hpp"
#include "core/clock_lock.hpp"
#include "core/exception_message.hpp"
#include "core/results_builder.hpp"
#include "core/sampling_plan.hpp"
#include "core/session.hpp"
#include "core/thermal_guard.hpp"
#include "core/throttle.hpp"
#include "io/progress.hpp"
#include "kscope/errors.hpp"
#include "kscope/measurement_backend.hpp"
#include "kscope/profile.hpp"

namespace kscope {
namespace {

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Ends the backend session on every exit path.
struct SessionGuard {
  MeasurementBackend& backend;
  ~SessionGuard() { backend.end_session(); }
};

ClockReading read_clocks(DeviceControl* device) { return device ? device->clocks() : ClockReading{}; }

// A batch of runs is collected once its oldest run is this old, whatever the backend's batch size:
// it bounds how far the sweep runs past an adaptive stop or a time budget.
constexpr double kMaxBatchSeconds = 0.02;

// A run whose body has returned, waiting for the backend to hand back its measurements.
struct EndedRun {
  std::size_t run;  // in the config, warm-ups included
  detail::RunRegions regions;
  ClockReading before;
  double started_s;
};

// One call of the body per replay pass; the regions must be the same in every pass.
void call_body(const Body& body, const Config& config, detail::RunRecorder& recorder, MeasurementBackend& backend) {
  try {
    body(config);
    for (std::size_t pass = 2; backend.another_pass_needed(); ++pass) {
      const std::vector<std::string> regions = recorder.names();
      recorder.begin_run();
      body(config);
      if (recorder.names() != regions)
        throw AnnotationError("replay pass " + std::to_string(pass) +
                              " opened other regions than the first pass; with metrics that need several passes "
                              "the body must open the same annotations in the same order every time");
    }
  } catch (...) {
    backend.abandon_run();
    throw;
  }
}

}  // namespace

Results profile_with_backend(const Sweep& sweep, const Settings& settings, const Body& body,
                             MeasurementBackend& backend) {
  settings.validate();
  const std::vector<Config> configs = sweep.configs();
  if (!body) throw ConfigError("profile() was given an empty body function");
  detail::SamplingPlan plan(settings, now_s());

  detail::RunRecorder recorder(backend, settings.cache_control == CacheControl::all);
  detail::ActiveRecorderScope scope(recorder);
  backend.begin_session(settings);
  SessionGuard session_guard{backend};
  DeviceControl* device = backend.device_control();

  SessionInfo info = backend.describe();
  info.cache_control = to_string(settings.cache_control);
  info.clock_control = to_string(settings.clock_control);
  info.mode = mode_name(settings.cache_control, settings.clock_control);
  std::optional<detail::ClockLock> clock_lock;
  if (settings.clock_control == ClockControl::base) {
    if (!device)
      throw BackendError("clock_control base needs NVML to lock the clocks, and this backend has no device control; "
                         "use clock_control none");
    clock_lock.emplace(*device);
    info.locked_sm_clock_mhz = clock_lock->locked_clocks().sm_mhz;
    info.locked_memory_clock_mhz = clock_lock->locked_clocks().memory_mhz;
  }
  const double expected_sm_mhz = clock_lock ? info.locked_sm_clock_mhz : info.rated_sm_clock_mhz;
  detail::ThermalGuard thermal(
      settings, [device] { return device ? device->thermal_margin_c() : std::nullopt; },
      [](double s) { std::this_thread::sleep_for(std::chrono::duration<double>(s)); }, now_s);

  detail::ResultsBuilder builder(info, configs, backend.metrics(), settings);
  const std::size_t metric_count = backend.metrics().size();
  auto progress = detail::make_stderr_progress(settings.verbosity, configs.size(),
                                               settings.warmup_runs + plan.expected_runs());
  std::set<std::pair<std::string, std::size_t>> warned;

  // A SweepError carrying everything measured so far (also written out when a prefix is set).
  const auto fail = [&](const std::string& context, const std::string& failed_config,
                        std::exception_ptr cause) -> SweepError {
    auto partial = std::make_shared<const Results>(builder.build(false));
    std::string message = context + ": " + detail::exception_message(cause) + "\n" +
                          std::to_string(partial->rows().size()) +
                          " summary rows measured before it are kept in SweepError::partial_results()";
    if (!settings.output_prefix.empty()) {
      partial->write_all(settings.output_prefix);
      message += " and written to " + settings.output_prefix + "{summary.csv,samples.csv,results.json}";
    }
    return SweepError(message, failed_config, cause, partial);
  };
  const auto run_label = [&](std::size_t run) -> std::string {
    return run < settings.warmup_runs ? "warm-up run " + std::to_string(run + 1)
                                      : "run " + std::to_string(run - settings.warmup_runs + 1);
  };

  for (const Config& config : configs) {
    progress->config_started(config.index(), config.to_string());
    plan.start_config(now_s());
    const std::size_t pauses_before = thermal.pauses();
    const std::size_t run_limit = settings.warmup_runs + plan.max_runs();
    const auto context = [&](const std::string& runs) {
      return "config " + std::to_string(config.index() + 1) + "/" + std::to_string(configs.size()) + " (" +
             config.to_string() + ") failed in " + runs;
    };
    std::optional<bool> converged;
    std::vector<EndedRun> ended;

    // Collects the ended runs and records them in order, asking the plan after each. True once
    // it says stop; runs of the batch past that point were measured speculatively and are dropped.
    const auto record_ended = [&]() -> bool {
      const std::vector<EndedRun> batch = std::exchange(ended, {});
      std::vector<RunMeasurement> measured;
      try {
        measured = backend.collect_runs();
        if (measured.size() != batch.size())
          throw BackendError("the backend returned " + std::to_string(measured.size()) + " runs for " +
                             std::to_string(batch.size()) + " ended ones (kscope bug)");
      } catch (...) {
        const std::string runs = batch.size() == 1 ? run_label(batch.front().run)
                                                   : run_label(batch.front().run) + " to " + run_label(batch.back().run);
        throw fail(context(runs), config.to_string(), std::current_exception());
      }
      const ClockReading collected = read_clocks(device);
      for (std::size_t i = 0; i < batch.size(); ++i) {
        const EndedRun& e = batch[i];
        // A batched run's closing reading is the next run's opening one.
        const ClockReading after = i + 1 < batch.size() ? batch[i + 1].before : collected;
        try {
          const auto regions = detail::attribute_run(e.regions, measured[i], metric_count, settings);
          for (const auto& r : regions) {
            if (r.failed && warned.insert({r.annotation, config.index()}).second)
              std::cerr << "[kscope] warning: annotation '" << r.annotation << "' failed in config ("
                        << config.to_string() << ") and was recorded as NaN (ignore_failures): "
                        << r.failure_reason << "\n";
          }
          if (e.run >= settings.warmup_runs)
            builder.add_run(config, e.run - settings.warmup_runs, regions, e.before, after,
                            detail::is_throttled(e.before, after, expected_sm_mhz));
        } catch (...) {
          throw fail(context(run_label(e.run)), config.to_string(), std::current_exception());
        }
        progress->run_finished();
        if (e.run + 1 < settings.warmup_runs) continue;
        using Verdict = detail::SamplingPlan::Verdict;
        const Verdict v = plan.after_run(e.run + 1 - settings.warmup_runs, builder.current_config_series(), now_s());
        if (v == Verdict::more) continue;
        if (v != Verdict::done) converged = v == Verdict::converged;
        return true;
      }
      return false;
    };

    for (std::size_t run = 0;; ++run) {
      try {
        if (const double paused = thermal.before_run(); paused > 0) {
          info.thermal_pauses = thermal.pauses();
          info.thermal_pause_s = thermal.paused_seconds();
          builder.set_session(info);
          progress->debug("thermal guard paused " + std::to_string(paused) + " s before " + run_label(run));
        }
        const ClockReading before = read_clocks(device);
        const double started_s = now_s();
        recorder.begin_run();
        backend.begin_run();
        call_body(body, config, recorder, backend);
        backend.end_run(recorder.region_count());
        ended.push_back({run, recorder.regions(), before, started_s});
      } catch (...) {
        const std::exception_ptr cause = std::current_exception();
        // Keep what the runs before this one measured; the failure reported is this run's.
        try {
          if (!ended.empty()) record_ended();
        } catch (...) {
        }
        throw fail(context(run_label(run)), config.to_string(), cause);
      }
      const bool collect = ended.size() >= backend.runs_per_collection() || run + 1 >= run_limit ||
                           now_s() - ended.front().started_s >= kMaxBatchSeconds;
      if (collect && record_ended()) break;
    }
    builder.set_config_outcome(config.index(), converged, thermal.pauses() - pauses_before);
    progress->config_finished();
  }
  progress->finished();

  Results results = [&] {
    try {
      return builder.build(true);
    } catch (...) {
      throw fail("all configs ran, but the results could not be normalized", "", std::current_exception());
    }
  }();
  if (!settings.output_prefix.empty()) results.write_all(settings.output_prefix);
  return results;
}

}  // namespace kscope

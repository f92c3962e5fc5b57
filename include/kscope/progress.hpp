#pragma once
// Progress of a sweep for a front end that shows it itself (a notebook's progress bar): with a
// ProgressObserver in Settings, profile() calls it instead of writing progress to stderr.
#include <cstddef>
#include <functional>
#include <optional>
#include <string>

namespace kscope {

// What a ProgressObserver is told as a sweep runs: the event and where the sweep stands.
struct SweepProgress {
  // What just happened.
  enum class Event { config_started, run_finished, config_finished, sweep_finished };
  Event event = Event::config_started;  // what just happened
  std::size_t config_index = 0;     // 0-based
  std::size_t total_configs = 0;  // configs in the sweep
  std::string config_text;          // e.g. "n=1024, dtype=f16"
  std::size_t config_runs_done = 0; // body calls of this config so far, warm-ups included
  std::size_t runs_per_config = 0;  // expected body calls per config (adaptive sampling may stop sooner)
  std::size_t runs_done = 0;        // body calls of the sweep so far
  double elapsed_s = 0;  // since the sweep started
  std::optional<double> eta_s;      // the average time per body call times the calls to come
};

// Called on the thread that runs the body, after each body call and at each config's start and
// end, so it can be frequent: throttling is the observer's. An exception it throws stops the sweep
// as the body's would.
using ProgressObserver = std::function<void(const SweepProgress&)>;

}  // namespace kscope

#pragma once
// Progress of a profiling session for the person waiting on it: a bar redrawn in place on a
// terminal, one plain line per config in logs and pipes, calls of a ProgressObserver when the
// front end shows progress itself, nothing when quiet.
#include <cstddef>
#include <functional>
#include <iosfwd>
#include <memory>
#include <string>

#include "kscope/progress.hpp"
#include "kscope/settings.hpp"

namespace kscope::detail {

class ProgressReporter {
 public:
  // Seconds on a monotonic clock; injectable so that tests control elapsed time and ETA.
  using Clock = std::function<double()>;

  // runs_per_config counts every body call of a config, warm-ups included. An empty clock means
  // std::chrono::steady_clock. The clock is read once here: elapsed time starts now.
  // A non-empty observer receives the progress instead of `out` (which still gets debug messages).
  ProgressReporter(Verbosity verbosity, std::size_t total_configs, std::size_t runs_per_config,
                   std::ostream& out, bool is_terminal, Clock now_seconds = {},
                   ProgressObserver observer = {});
  ~ProgressReporter();  // ends a bar line that an interrupted sweep left open

  ProgressReporter(const ProgressReporter&) = delete;
  ProgressReporter& operator=(const ProgressReporter&) = delete;

  void config_started(std::size_t index, const std::string& config_text);  // index is 0-based
  void run_finished();  // one body call done (warm-up or recorded)
  void config_finished();
  void finished();  // "profiled N configs in X s"
  void debug(const std::string& message);  // printed only at Verbosity::debug

 private:
  enum class Mode { silent, bar, lines, observer };

  std::string config_label(std::size_t max_text_width) const;
  void draw_bar(double now);
  void write_line(const std::string& text);
  void notify(SweepProgress::Event event, double now);
  std::optional<double> eta_s(double now) const;

  Mode mode_;
  bool debug_;
  std::size_t total_configs_;
  std::size_t runs_per_config_;
  std::ostream& out_;
  Clock now_;
  ProgressObserver observer_;
  double start_;
  double config_start_;
  double last_draw_;
  std::size_t config_index_ = 0;
  std::string config_text_;
  std::size_t config_runs_ = 0;
  std::size_t runs_done_ = 0;
  std::size_t configs_done_ = 0;
  std::size_t drawn_width_ = 0;  // columns the bar line occupies on screen; 0 when none is open
};

// A reporter on the logger's console (core/model/log.hpp: stderr, or the front end's) that draws a bar
// when that console is a terminal. With an observer, progress goes to it instead.
std::unique_ptr<ProgressReporter> make_stderr_progress(Verbosity verbosity,
                                                       std::size_t total_configs,
                                                       std::size_t runs_per_config,
                                                       ProgressObserver observer = {});

}  // namespace kscope::detail

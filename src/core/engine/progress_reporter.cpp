#include "core/engine/progress_reporter.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <limits>

#include "base/text.hpp"
#include "core/model/log.hpp"

namespace kscope::detail {
namespace {

constexpr const char* prefix = "[kscope] ";
constexpr std::size_t bar_width = 20;
constexpr std::size_t bar_config_text_width = 32;  // keeps the bar line within ~100 columns
constexpr double min_redraw_interval_s = 0.1;      // microsecond bodies would flood the terminal

double steady_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

std::string format_seconds(double seconds) {
  char buffer[32];
  if (seconds < 10) {
    std::snprintf(buffer, sizeof buffer, "%.2f s", seconds);
  } else if (seconds < 60) {
    std::snprintf(buffer, sizeof buffer, "%.1f s", seconds);
  } else if (seconds < 3600) {
    const auto whole = static_cast<long>(seconds);
    std::snprintf(buffer, sizeof buffer, "%ldm%02lds", whole / 60, whole % 60);
  } else {
    const auto minutes = static_cast<long>(seconds / 60);
    std::snprintf(buffer, sizeof buffer, "%ldh%02ldm", minutes / 60, minutes % 60);
  }
  return buffer;
}

std::string count_of(std::size_t n, const std::string& noun) {
  return std::to_string(n) + " " + noun + (n == 1 ? "" : "s");
}

}  // namespace

ProgressReporter::ProgressReporter(Verbosity verbosity, std::size_t total_configs,
                                   std::size_t runs_per_config, std::ostream& out,
                                   bool is_terminal, Clock now_seconds,
                                   ProgressObserver observer)
    : mode_(verbosity == Verbosity::quiet                        ? Mode::silent
            : observer                                    ? Mode::observer
            : verbosity == Verbosity::info && is_terminal ? Mode::bar
                                                                 : Mode::lines),
      debug_(verbosity == Verbosity::debug),
      total_configs_(total_configs),
      runs_per_config_(runs_per_config),
      out_(out),
      now_(now_seconds ? std::move(now_seconds) : Clock(steady_seconds)),
      observer_(std::move(observer)),
      start_(now_()),
      config_start_(start_),
      last_draw_(-std::numeric_limits<double>::infinity()) {}

ProgressReporter::~ProgressReporter() {
  if (drawn_width_ > 0) out_ << '\n' << std::flush;
}

void ProgressReporter::config_started(std::size_t index, const std::string& config_text) {
  config_index_ = index;
  config_text_ = config_text;
  config_runs_ = 0;
  config_start_ = now_();
  if (mode_ == Mode::bar) draw_bar(config_start_);
  notify(SweepProgress::Event::config_started, config_start_);
}

void ProgressReporter::run_finished() {
  ++runs_done_;
  ++config_runs_;
  if (mode_ == Mode::observer) notify(SweepProgress::Event::run_finished, now_());
  if (mode_ != Mode::bar) return;
  const double now = now_();
  if (now - last_draw_ >= min_redraw_interval_s) draw_bar(now);
}

void ProgressReporter::config_finished() {
  ++configs_done_;
  const double now = now_();
  if (mode_ == Mode::bar) draw_bar(now);
  notify(SweepProgress::Event::config_finished, now);
  if (mode_ == Mode::lines) {
    write_line(config_label(std::numeric_limits<std::size_t>::max()) + ": " +
               count_of(config_runs_, "run") + " in " + format_seconds(now - config_start_));
  }
}

void ProgressReporter::finished() {
  if (mode_ == Mode::silent) return;
  const double now = now_();
  if (mode_ == Mode::observer) return notify(SweepProgress::Event::sweep_finished, now);
  if (mode_ == Mode::bar) {
    draw_bar(now);
    out_ << '\n';
    drawn_width_ = 0;
  }
  write_line("profiled " + count_of(configs_done_, "config") + " in " +
             format_seconds(now - start_));
}

void ProgressReporter::debug(const std::string& message) {
  if (debug_) write_line(message);
}

std::string ProgressReporter::config_label(std::size_t max_text_width) const {
  std::string label =
      "config " + std::to_string(config_index_ + 1) + "/" + std::to_string(total_configs_);
  if (!config_text_.empty()) label += " (" + truncate_to_width(config_text_, max_text_width) + ")";
  return label;
}

void ProgressReporter::draw_bar(double now) {
  const std::size_t total_runs = total_configs_ * runs_per_config_;
  const std::size_t runs_counted = std::min(runs_done_, total_runs);
  const double fraction =
      total_runs == 0 ? 1.0 : static_cast<double>(runs_counted) / static_cast<double>(total_runs);
  const auto filled = static_cast<std::size_t>(fraction * bar_width);
  const double elapsed = now - start_;
  const std::optional<double> eta_seconds = eta_s(now);
  const std::string eta = eta_seconds ? format_seconds(*eta_seconds) : "--";
  char percent[8];
  std::snprintf(percent, sizeof percent, "%3d%%", static_cast<int>(fraction * 100));

  const std::string line = std::string(prefix) + "[" + std::string(filled, '#') +
                           std::string(bar_width - filled, '.') + "] " + percent + "  " +
                           config_label(bar_config_text_width) + "  elapsed " +
                           format_seconds(elapsed) + "  ETA " + eta;
  // Blanks over the tail of a longer previous line, which '\r' alone would leave visible.
  const std::size_t width = display_width(line);
  const std::string blanks(drawn_width_ > width ? drawn_width_ - width : 0, ' ');
  out_ << '\r' << line << blanks << std::flush;
  drawn_width_ = std::max(drawn_width_, width);
  last_draw_ = now;
}

std::optional<double> ProgressReporter::eta_s(double now) const {
  if (runs_done_ == 0) return std::nullopt;
  const std::size_t total_runs = total_configs_ * runs_per_config_;
  // The average time per body call so far, times the calls still to come.
  return (now - start_) / static_cast<double>(runs_done_) *
         static_cast<double>(total_runs - std::min(runs_done_, total_runs));
}

void ProgressReporter::notify(SweepProgress::Event event, double now) {
  if (mode_ != Mode::observer) return;
  SweepProgress p;
  p.event = event;
  p.config_index = config_index_;
  p.total_configs = total_configs_;
  p.config_text = config_text_;
  p.config_runs_done = config_runs_;
  p.runs_per_config = runs_per_config_;
  p.runs_done = runs_done_;
  p.elapsed_s = now - start_;
  p.eta_s = eta_s(now);
  observer_(p);
}

void ProgressReporter::write_line(const std::string& text) {
  out_ << prefix << text << '\n' << std::flush;
}

std::unique_ptr<ProgressReporter> make_stderr_progress(Verbosity verbosity,
                                                       std::size_t total_configs,
                                                       std::size_t runs_per_config,
                                                       ProgressObserver observer) {
  return std::make_unique<ProgressReporter>(verbosity, total_configs, runs_per_config, console(),
                                            console_is_terminal(), ProgressReporter::Clock{}, std::move(observer));
}

}  // namespace kscope::detail

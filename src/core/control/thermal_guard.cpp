#include "core/control/thermal_guard.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "core/model/caller_language.hpp"
#include "kscope/errors.hpp"

namespace kscope::detail {
namespace {
std::string degrees(double c) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.0f°C", c);
  return buf;
}
}  // namespace

ThermalGuard::ThermalGuard(const Settings& s, ReadMargin read, Sleep sleep, Now now)
    : mode_(s.thermal_mode), wait_(s.thermal_wait_c), cont_(s.thermal_cont_c), timeout_(s.thermal_timeout_s),
      read_(std::move(read)), sleep_(std::move(sleep)), now_(std::move(now)) {
  if (mode_ == ThermalMode::off) return;
  const std::string wait = option("thermal_wait_c"), cont = option("thermal_cont_c");
  if (!(cont_ > wait_))
    throw ConfigError("Invalid thermal control parameters: " + cont + " (" + degrees(cont_) + ") must be greater than " +
                      wait + " (" + degrees(wait_) + "): profiling pauses at " + wait + " degrees of headroom and resumes at " +
                      cont + "; raise " + cont + " or lower " + wait);
  if (!(wait_ >= 0)) throw ConfigError(wait + " must be >= 0 °C of thermal headroom, not " + degrees(wait_));
  if (!(timeout_ > 0))
    throw ConfigError(option("thermal_timeout_s") + " must be a positive number of seconds, not " +
                      std::to_string(timeout_));
}

double ThermalGuard::before_run() {
  if (mode_ == ThermalMode::off) return 0;
  if (counting_) ++runs_since_resume_;
  if (now_() < next_check_s_) return 0;
  next_check_s_ = now_() + kCheckIntervalSeconds;
  const std::optional<double> margin = read_();
  if (!margin) return 0;
  if (*margin > wait_) {
    if (*margin >= cont_) counting_ = true;
    return 0;
  }
  if (mode_ == ThermalMode::automatic && counting_) {
    if (runs_since_resume_ < kFewRuns) cont_ = std::min(cont_ + kStep, kMaxCont);
    else if (runs_since_resume_ > kManyRuns) cont_ = std::max(cont_ - kStep, kMinCont);
  }
  counting_ = false;
  runs_since_resume_ = 0;
  const double paused = cool_down(*margin);
  counting_ = true;
  ++pauses_;
  paused_s_ += paused;
  next_check_s_ = now_() + kCheckIntervalSeconds;
  return paused;
}

double ThermalGuard::cool_down(double margin) {
  const double start = now_();
  double deadline = start + timeout_;
  while (margin < cont_) {
    if (now_() > deadline) {
      if (mode_ == ThermalMode::manual)
        // Nsight Python's sentences first (its users match on them), then the fixes.
        throw ThermalError("Timeout after " + std::to_string(static_cast<int>(timeout_)) + "s. Cannot reach " +
                           option("thermal_cont_c") + "=" + degrees(cont_) + " (current thermal headroom: " +
                           degrees(margin) + "): the GPU did not cool down in time; increase " +
                           option("thermal_timeout_s") + ", lower " + option("thermal_cont_c") + " or " +
                           option("thermal_wait_c") + ", or let the GPU cool");
      // Automatic mode settles for less headroom before giving up.
      if (cont_ <= kMinCont)
        throw ThermalError("Adaptive thermal control reached minimum " + option("thermal_cont_c") + "=" +
                           degrees(kMinCont) + " but GPU thermal headroom is only " + degrees(margin) +
                           ". Cannot continue profiling: check the GPU's cooling, or use " + option("thermal_mode") +
                           spell(" = ThermalMode::off", "='off'"));
      cont_ = std::max(cont_ - kStep, kMinCont);
      deadline = now_() + timeout_;
      continue;
    }
    sleep_(kPollSeconds);
    const std::optional<double> next = read_();
    if (!next) break;
    margin = *next;
  }
  return now_() - start;
}

}  // namespace kscope::detail

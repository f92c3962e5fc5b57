#pragma once
// Pauses before a run while the GPU's thermal margin (T.Limit headroom, °C) is low. In automatic
// mode the resume threshold adapts: if the GPU heats up again after only a few runs it cools
// longer next time, if it ran for very long it resumes earlier.
#include <cstddef>
#include <functional>
#include <optional>

#include "kscope/settings.hpp"

namespace kscope::detail {

class ThermalGuard {
 public:
  using ReadMargin = std::function<std::optional<double>()>;  // nullopt: not supported here
  using Sleep = std::function<void(double seconds)>;
  using Now = std::function<double()>;                         // seconds, monotonic

  static constexpr double kPollSeconds = 0.5;
  // Reading the margin costs about 0.6 ms on an H200, more than many kernels: between pauses it is
  // read at most this often (a GPU does not heat measurably in that time).
  static constexpr double kCheckIntervalSeconds = 0.1;
  static constexpr double kMinCont = 12, kMaxCont = 50, kStep = 3;
  static constexpr std::size_t kFewRuns = 5, kManyRuns = 50;

  // Throws ConfigError for inconsistent thresholds.
  ThermalGuard(const Settings& settings, ReadMargin read, Sleep sleep, Now now);

  // Called before each run; returns the seconds spent paused. Throws ThermalError on timeout.
  double before_run();

  bool active() const { return mode_ != ThermalMode::off; }
  std::size_t pauses() const { return pauses_; }
  double paused_seconds() const { return paused_s_; }
  double resume_threshold() const { return cont_; }

 private:
  double cool_down(double margin);

  ThermalMode mode_;
  double wait_, cont_, timeout_;
  ReadMargin read_;
  Sleep sleep_;
  Now now_;
  double next_check_s_ = -1e300;
  bool counting_ = false;
  std::size_t runs_since_resume_ = 0;
  std::size_t pauses_ = 0;
  double paused_s_ = 0;
};

}  // namespace kscope::detail

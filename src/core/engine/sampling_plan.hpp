#pragma once
// Decides after each recorded run whether a config has enough samples: a fixed count, or
// (adaptive) until every measured series meets its target, within the per-config and the
// whole-sweep time budgets.
#include <cstddef>
#include <vector>

#include "kscope/settings.hpp"
#include "kscope/stopping_rule.hpp"

namespace kscope::detail {

class SamplingPlan {
 public:
  enum class Verdict { more, done, converged, out_of_budget };

  // Throws ConfigError for an inconsistent adaptive configuration.
  SamplingPlan(const Settings& settings, double sweep_start_s);

  void start_config(double now_s);
  // `series`: the recorded values so far of each measured (annotation, metric) of the config.
  // Past 100 runs the target is checked only about every 2% more runs: summarizing sorts the
  // samples, and checking every run would make long adaptive sweeps quadratic.
  Verdict after_run(std::size_t recorded, const std::vector<std::vector<double>>& series, double now_s) const;
  // The recorded runs a config is expected to take, for progress estimates.
  std::size_t expected_runs() const;
  // The most recorded runs a config can take.
  std::size_t max_runs() const { return adaptive() ? settings_.adaptive.max_runs : settings_.runs; }
  bool adaptive() const { return settings_.sampling == Sampling::adaptive; }

 private:
  bool meets_target(const std::vector<double>& values) const;

  const Settings& settings_;
  const StoppingRule& rule_;  // the one settings_.adaptive.criterion names
  double sweep_deadline_s_;
  double config_deadline_s_ = 0;
};

}  // namespace kscope::detail

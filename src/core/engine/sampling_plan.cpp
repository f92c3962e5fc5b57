#include "core/engine/sampling_plan.hpp"

#include <algorithm>

#include "core/model/caller_language.hpp"
#include "kscope/errors.hpp"
#include "kscope/statistics.hpp"

namespace kscope::detail {

SamplingPlan::SamplingPlan(const Settings& settings, double sweep_start_s)
    : settings_(settings),
      rule_(stopping_rule(settings.adaptive.criterion)),
      sweep_deadline_s_(sweep_start_s + settings.adaptive.timeout_s) {
  if (!adaptive()) return;
  const AdaptiveSampling& a = settings.adaptive;
  if (!(a.target_pct > 0))
    throw ConfigError("adaptive sampling needs " + option("adaptive.target_pct") + " > 0 (e.g. 1.0 for 1%)");
  if (a.min_runs < 2)
    throw ConfigError("adaptive sampling needs " + option("adaptive.min_runs") +
                      " >= 2: the spread of one sample is undefined");
  if (a.max_runs < a.min_runs)
    throw ConfigError("adaptive sampling: " + option("adaptive.max_runs") + " must be >= " + option("adaptive.min_runs"));
  if (!(a.config_budget_s > 0) || !(a.timeout_s > 0))
    throw ConfigError("adaptive sampling: " + option("adaptive.config_budget_s") + " and " +
                      option("adaptive.timeout_s") + " must be positive");
}

void SamplingPlan::start_config(double now_s) {
  config_deadline_s_ = now_s + settings_.adaptive.config_budget_s;
}

std::size_t SamplingPlan::expected_runs() const {
  return adaptive() ? settings_.adaptive.min_runs : settings_.runs;
}

bool SamplingPlan::meets_target(const std::vector<double>& values) const {
  const SampleStatistics s = summarize(values, settings_.stable_rsd_pct);
  if (s.count < 2 || s.mean == 0) return false;
  return rule_.spread_pct(s) < settings_.adaptive.target_pct;
}

SamplingPlan::Verdict SamplingPlan::after_run(std::size_t recorded, const std::vector<std::vector<double>>& series,
                                              double now_s) const {
  if (!adaptive()) return recorded >= settings_.runs ? Verdict::done : Verdict::more;
  const AdaptiveSampling& a = settings_.adaptive;
  if (recorded < a.min_runs) return Verdict::more;
  const bool check_point = recorded <= 100 || recorded % (recorded / 50) == 0;
  if (check_point && !series.empty() && std::all_of(series.begin(), series.end(), [&](const auto& v) { return meets_target(v); }))
    return Verdict::converged;
  // Past the sweep's timeout, every remaining config stops at min_runs.
  if (recorded >= a.max_runs || now_s >= config_deadline_s_ || now_s >= sweep_deadline_s_)
    return Verdict::out_of_budget;
  return Verdict::more;
}

}  // namespace kscope::detail

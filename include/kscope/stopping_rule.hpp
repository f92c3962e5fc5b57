#pragma once
// Adaptive sampling's stopping rules (Settings::adaptive), each a name and a function, as NVBench
// registers its stopping criteria: AdaptiveSampling::criterion names the rule a sweep stops by, and
// the results file, the manifest and Python's adaptive={'criterion': ...} take the rules' names from
// one table (src/core/model/stopping_rules.cpp). A program adds a rule with register_stopping_rule()
// (docs/architecture.md, "How to add a stopping rule").
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "kscope/summary_statistics.hpp"

namespace kscope {

// A registered stopping rule, by its name: what AdaptiveSampling::criterion chooses.
class StopCriterion {
 public:
  constexpr StopCriterion() = default;  // ci_halfwidth

  static const StopCriterion ci_halfwidth;  // the 95% CI half-width, relative to the mean, is below the target
  static const StopCriterion rsd;           // the samples' relative standard deviation is below the target

  // The registered rule of this name; throws ConfigError naming the registered ones.
  static StopCriterion named(std::string_view name);

  constexpr std::string_view name() const { return name_; }  // "ci_halfwidth", "rsd", ...
  // Two criteria are the same when their names are.
  friend constexpr bool operator==(StopCriterion a, StopCriterion b) { return a.name_ == b.name_; }

 private:
  constexpr explicit StopCriterion(std::string_view name) : name_(name) {}
  friend class StoppingRules;

  std::string_view name_ = "ci_halfwidth";  // a literal, or a registered rule's name: never dangles
};

inline constexpr StopCriterion StopCriterion::ci_halfwidth{"ci_halfwidth"};
inline constexpr StopCriterion StopCriterion::rsd{"rsd"};

std::string to_string(StopCriterion criterion);  // its name

// A stopping rule: adaptive sampling stops a config once, for every measured (annotation, metric),
// the rule's spread of the samples so far is below AdaptiveSampling::target_pct.
struct StoppingRule {
  std::string name;  // AdaptiveSampling::criterion's (StopCriterion::named), the results file's
  // The spread, in percent, from the samples' statistics (at least 2 samples, a mean other than 0);
  // NaN: not known yet, so the config goes on.
  std::function<double(const SampleStatistics& stats)> spread_pct;
};

// Adds a stopping rule and returns its name; throws ConfigError for an empty name or function, or a
// name taken. Register before the sweeps (and the Settings) that name it; a rule is never removed.
StopCriterion register_stopping_rule(StoppingRule rule);

// Every registered rule, kscope's own first, in the order registered.
std::vector<StopCriterion> registered_stopping_rules();

// The rule a criterion names.
const StoppingRule& stopping_rule(StopCriterion criterion);

}  // namespace kscope

// The stopping rules' table (kscope/stopping_rule.hpp): kscope's own rows, then those a program
// registers. SamplingPlan stops a config by the rule its settings name; the results file and the
// manifest write and read the rule's name; Python's adaptive={'criterion': ...} takes the names.
#include "kscope/stopping_rule.hpp"

#include <cmath>

#include "core/model/registry.hpp"
#include "kscope/errors.hpp"

namespace kscope {

// Makes the StopCriterion values, whose constructor is private to them and this class.
class StoppingRules {
 public:
  static detail::Registry<StoppingRule>& registry() {
    // kscope's own: the CI half-width shrinks as samples accumulate, the RSD only settles.
    static detail::Registry<StoppingRule> rules(
        "stopping rule", "register_stopping_rule()",
        {{std::string(StopCriterion::ci_halfwidth.name()),
          [](const SampleStatistics& s) { return 100.0 * (s.ci95_upper - s.mean) / std::fabs(s.mean); }},
         {std::string(StopCriterion::rsd.name()), [](const SampleStatistics& s) { return s.rsd_pct; }}});
    return rules;
  }

  static StopCriterion add(StoppingRule rule) {
    if (rule.name.empty() || !rule.spread_pct)
      throw ConfigError("register_stopping_rule(): a stopping rule needs a name and a function");
    return StopCriterion(registry().add(std::move(rule)).name);
  }

  static StopCriterion named(std::string_view name) { return StopCriterion(registry().named(name).name); }

  static std::vector<StopCriterion> all() {
    return registry().names_as([](std::string_view name) { return StopCriterion(name); });
  }
};

StopCriterion StopCriterion::named(std::string_view name) { return StoppingRules::named(name); }

std::string to_string(StopCriterion criterion) { return std::string(criterion.name()); }

StopCriterion register_stopping_rule(StoppingRule rule) { return StoppingRules::add(std::move(rule)); }

std::vector<StopCriterion> registered_stopping_rules() { return StoppingRules::all(); }

const StoppingRule& stopping_rule(StopCriterion criterion) {
  if (const StoppingRule* rule = StoppingRules::registry().find(criterion.name())) return *rule;
  throw InternalError("stopping rule '" + to_string(criterion) + "' is not registered (kscope bug: please report it)");
}

}  // namespace kscope

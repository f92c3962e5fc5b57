// The stopping rules' table (kscope/stopping_rule.hpp): kscope's own rows, then those a program
// registers. SamplingPlan stops a config by the rule its settings name; the results file and the
// manifest write and read the rule's name; Python's adaptive={'criterion': ...} takes the names.
#include "kscope/stopping_rule.hpp"

#include <cmath>
#include <deque>
#include <mutex>

#include "core/suggest.hpp"
#include "kscope/errors.hpp"

namespace kscope {

class StoppingRules {
 public:
  static StoppingRules& instance() {
    static StoppingRules rules;
    return rules;
  }

  StopCriterion add(StoppingRule rule) {
    const std::lock_guard lock(mutex_);
    if (rule.name.empty() || !rule.spread_pct)
      throw ConfigError("register_stopping_rule(): a stopping rule needs a name and a function");
    if (find_locked(rule.name))
      throw ConfigError("register_stopping_rule(): a stopping rule named '" + rule.name +
                        "' is registered already; choose another name");
    // A deque never moves its elements, so the StopCriterion below may view the stored name.
    rules_.push_back(std::move(rule));
    return StopCriterion(rules_.back().name);
  }

  const StoppingRule* find(std::string_view name) const {
    const std::lock_guard lock(mutex_);
    return find_locked(name);
  }

  std::vector<StopCriterion> all() const {
    const std::lock_guard lock(mutex_);
    std::vector<StopCriterion> out;
    for (const StoppingRule& r : rules_) out.push_back(StopCriterion(r.name));
    return out;
  }

 private:
  const StoppingRule* find_locked(std::string_view name) const {
    for (const StoppingRule& r : rules_)
      if (r.name == name) return &r;
    return nullptr;
  }

  mutable std::mutex mutex_;
  // kscope's own: the CI half-width shrinks as samples accumulate, the RSD only settles.
  std::deque<StoppingRule> rules_{
      {std::string(StopCriterion::ci_halfwidth.name()),
       [](const SampleStatistics& s) { return 100.0 * (s.ci95_upper - s.mean) / std::fabs(s.mean); }},
      {std::string(StopCriterion::rsd.name()), [](const SampleStatistics& s) { return s.rsd_pct; }},
  };
};

StopCriterion StopCriterion::named(std::string_view name) {
  if (const StoppingRule* rule = StoppingRules::instance().find(name)) return StopCriterion(rule->name);
  std::vector<std::string> names;
  for (const StopCriterion c : StoppingRules::instance().all()) names.push_back(to_string(c));
  throw ConfigError("no stopping rule is named '" + std::string(name) + "': the registered ones are " +
                    detail::quoted_list(names));
}

std::string to_string(StopCriterion criterion) { return std::string(criterion.name()); }

StopCriterion register_stopping_rule(StoppingRule rule) { return StoppingRules::instance().add(std::move(rule)); }

std::vector<StopCriterion> registered_stopping_rules() { return StoppingRules::instance().all(); }

const StoppingRule& stopping_rule(StopCriterion criterion) {
  if (const StoppingRule* rule = StoppingRules::instance().find(criterion.name())) return *rule;
  throw InternalError("stopping rule '" + to_string(criterion) + "' is not registered (kscope bug: please report it)");
}

}  // namespace kscope

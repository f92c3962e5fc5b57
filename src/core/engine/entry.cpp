#include "core/engine/entry.hpp"

#include "core/model/backend_choice.hpp"
#include "core/model/caller_language.hpp"
#include "core/model/metric_request.hpp"
#include "core/engine/request_checks.hpp"
#include "core/model/settings_table.hpp"
#include "core/files/sharding.hpp"
#include "kscope/detail/settings_fields.hpp"
#include "kscope/errors.hpp"

namespace kscope::detail {
namespace {

const Settings kDefaults{};

bool any_metrics(const Settings& s) { return !s.metrics.empty(); }
bool derives(const Settings& s) { return static_cast<bool>(s.derive_metric); }
bool combines(const Settings& s) { return static_cast<bool>(s.combine_kernel_metrics); }
bool ignores_kernels(const Settings& s) { return !s.ignore_kernel_list.empty(); }
bool normalizes(const Settings& s) { return !s.normalize_against.empty(); }
bool adaptive(const Settings& s) { return s.sampling == Sampling::adaptive; }
bool collects_info(const Settings& s) { return !s.info_collectors.empty(); }
bool collector_errors(const Settings& s) { return s.info_collector_errors != kDefaults.info_collector_errors; }
bool declares_work(const Settings& s) { return static_cast<bool>(s.work); }
bool ncu_sections(const Settings& s) { return !s.ncu_sections.empty(); }
bool excludes_throttled(const Settings& s) { return s.throttled_runs != kDefaults.throttled_runs; }
bool energy_window(const Settings& s) { return s.energy_window_s != kDefaults.energy_window_s; }
bool bound_thresholds(const Settings& s) {
  return s.bound_thresholds.memory_pct != kDefaults.bound_thresholds.memory_pct ||
         s.bound_thresholds.compute_pct != kDefaults.bound_thresholds.compute_pct;
}
bool resumes(const Settings& s) { return s.resume; }
bool sharded(const Settings& s) { return s.shard.has_value(); }

const std::string kProfileWinner = "; profile the winner with it once the race has chosen";
const std::string kDurationsOnly = "the race records durations only" + kProfileWinner;
const std::string kOneRange = "each annotated region is timed as one range over all its kernels";
const std::string kNoCounters = "it measures durations in this process, not Nsight Compute's report";

EntryRules profile_rules() {
  EntryRules rules;
  rules.name = "profile";
  return rules;
}

EntryRules tune_rules() {
  return {
      .name = "tune",
      .refused = {{"metrics", any_metrics,
                   "the race decides by the duration its backend measures (choose that backend instead)" +
                       kProfileWinner},
                  {"derive_metric", derives, "the race decides by the measured duration" + kProfileWinner},
                  {"combine_kernel_metrics", combines, kOneRange},
                  {"ignore_kernel_list", ignores_kernels, kOneRange},
                  {"normalize_against", normalizes, "the race compares the configs' durations directly"},
                  {"sampling", adaptive, "adaptive sampling: the race decides how many runs each config gets"},
                  {"throttled_runs", excludes_throttled,
                   "the race judges every run, confirming its eliminations where the SM clocks varied"},
                  {"info_collectors", collects_info, kDurationsOnly},
                  {"info_collector_errors", collector_errors, kDurationsOnly},
                  {"work", declares_work, kDurationsOnly},
                  {"bound_thresholds", bound_thresholds, kDurationsOnly},
                  {"energy_window_s", energy_window, kDurationsOnly},
                  {"ncu_sections", ncu_sections, kNoCounters}},
      .whole_regions = true,
      .can_measure = [](const BackendCapabilities& c) { return c.measures_duration; },
      .needs = "the race decides by durations measured in this process",
  };
}

EntryRules evaluate_rules() {
  const std::string durations = "it times both sides' GPU work (durations); hardware counters and energy are "
                                "measured with a profile, not an evaluation";
  const std::string every_run = "the verdict judges every run of both sides";
  return {
      .name = "evaluate",
      .refused = {{"metrics", any_metrics, durations},
                  {"ignore_kernel_list", ignores_kernels,
                   "every kernel, copy and fill of a call is part of its time, so that no work can hide in a kernel "
                   "with an ignored name"},
                  {"combine_kernel_metrics", combines, "each call is timed as one range over all its work"},
                  {"derive_metric", derives, "the speedup and the errors are its derived values"},
                  {"normalize_against", normalizes, "the Speedup column compares the two sides already"},
                  {"sampling", adaptive, "adaptive sampling: " + every_run + ", the same number of each"},
                  {"throttled_runs", excludes_throttled, every_run},
                  {"info_collectors", collects_info, "its columns are the verdict's, the errors and the findings"},
                  {"info_collector_errors", collector_errors,
                   "its columns are the verdict's, the errors and the findings"},
                  {"energy_window_s", energy_window, durations},
                  {"ncu_sections", ncu_sections, kNoCounters},
                  {"resume", resumes,
                   "the checks of each run are made as it runs and are not streamed; evaluate again"},
                  {"shard", sharded, "an evaluation runs in one process"}},
      .whole_regions = true,
      .launched = false,
      .can_measure = [](const BackendCapabilities& c) { return c.observes_calls; },
      .needs = "an evaluation times all the GPU work a call causes, on every stream, as it runs",
  };
}

// "tune does not take Settings::metrics: why", for the first refused option the settings give.
void refuse(const EntryRules& rules, const Settings& requested) {
  for (const RefusedOption& r : rules.refused)
    if (r.given(requested)) throw ConfigError(rules.name + " does not take " + option(r.field) + ": " + r.why);
}

Settings placed(const EntryRules& rules, const Settings& requested) {
  refuse(rules, requested);
  Settings s = rules.launched ? resolve_launch(requested) : requested;
  if (rules.whole_regions) s.replay_mode = ReplayMode::range;
  return s;
}

}  // namespace

const EntryRules& entry_rules(Entry entry) {
  static const EntryRules profile = profile_rules(), tune = tune_rules(), evaluate = evaluate_rules();
  switch (entry) {
    case Entry::tune: return tune;
    case Entry::evaluate: return evaluate;
    case Entry::profile: break;
  }
  return profile;
}

std::vector<EntryOptionsInfo> entry_options_infos() {
  const auto python_name = [](const std::string& field) { return find_settings_field(field)->python_name; };
  std::vector<EntryOptionsInfo> out;
  for (const Entry entry : {Entry::profile, Entry::tune, Entry::evaluate}) {
    const EntryRules& rules = entry_rules(entry);
    EntryOptionsInfo info{rules.name, {}, {}};
    for (const RefusedOption& r : rules.refused) info.refused.emplace_back(python_name(r.field), r.why);
    if (rules.whole_regions) info.fixed.push_back(python_name("replay_mode"));
    out.push_back(std::move(info));
  }
  return out;
}

std::string backends_for(const EntryRules& rules) {
  const Backend by_default = chosen_backend(Settings{});
  std::vector<std::string> named;
  for (const Backend b : registered_backends()) {
    const BackendDefinition& d = definition(b);
    if (d.make && (!rules.can_measure || rules.can_measure(d.capabilities)))
      named.push_back(backend_choice(b) + (b == by_default ? " (the default)" : ""));
  }
  std::string out;
  for (std::size_t i = 0; i < named.size(); ++i) out += (i == 0 ? "" : i + 1 == named.size() ? " or " : ", ") + named[i];
  return out;
}

EntryCall::EntryCall(Entry entry, const Sweep& sweep, const Settings& requested, const Body& body)
    : rules_(entry_rules(entry)),
      log_(requested.verbosity),
      settings_(placed(rules_, requested)),
      configs_(check_request(sweep, settings_, body)) {}

const BackendDefinition& EntryCall::chosen() const {
  const BackendDefinition& chosen = definition(chosen_backend(settings_));
  if (rules_.can_measure && (!chosen.make || !rules_.can_measure(chosen.capabilities)))
    throw ConfigError("the " + chosen.name + " backend cannot serve " + rules_.name + " in this process: " +
                      rules_.needs + "; " + rules_.name + " with " + backends_for(rules_));
  // A duration backend measures one metric of its own: anything else is refused before the GPU is touched.
  if (chosen.capabilities.measures_duration)
    check_requested_metrics(backend_metrics(settings_.metrics), chosen.default_metrics, chosen.name);
  return chosen;
}

std::unique_ptr<MeasurementBackend> EntryCall::make(const BackendDefinition& chosen) const {
  if (!chosen.make)
    throw InternalError("backend '" + chosen.name + "' has no factory and its route left a call naming it to this " +
                        "process (a bug of its definition in the backend registry)");
  return chosen.make(settings_);
}

void EntryCall::hold_session() {
  if (!guard_) guard_.emplace();
}

void EntryCall::start(const MeasurementBackend& backend) {
  hold_session();
  check_backend_measures(settings_, backend);
}

}  // namespace kscope::detail

#include "core/model/settings_table.hpp"

#include <algorithm>

#include <cmath>

#include "core/model/caller_language.hpp"
#include "core/model/metric_request.hpp"
#include "core/model/row_roofline.hpp"
#include "kscope/detail/settings_fields.hpp"
#include "kscope/errors.hpp"

namespace kscope::detail {
namespace {

using namespace json_fields;
using S = Settings;
using Role = SettingsRole;

// A field stored as it is.
template <typename T>
SettingsStorage stored(std::string key, T S::*member) {
  return {field<S>(std::move(key), [member](auto& s) -> auto& { return s.*member; }), member};
}

// A field holding an object of its own fields.
template <typename Inner>
SettingsStorage stored(std::string key, Inner S::*member, std::vector<Field<Inner>> fields) {
  return {nested<S, Inner>(std::move(key), [member](auto& s) -> auto& { return s.*member; }, std::move(fields)),
          member};
}

// A field added after the results format's first files: a file without it loads with the default.
SettingsStorage added_later(SettingsStorage storage) {
  storage.json = json_fields::added_later(std::move(storage.json));
  return storage;
}

// A callable: saved nowhere, compared by whether it is set.
template <typename T>
SettingsStorage whether_set(std::string key, T S::*member) {
  return {{std::move(key), [member](const S& s) { return Written(static_cast<bool>(s.*member)); }, {}}, {}};
}

// A field that is neither saved nor compared.
template <typename T>
SettingsStorage not_recorded(std::string key, T S::*member) {
  return {{std::move(key), {}, {}}, member};
}

// A callable that is neither saved nor compared.
SettingsStorage not_recorded(std::string key) { return {{std::move(key), {}, {}}, {}}; }

SettingsStorage shard_field() {
  return {{"shard",
           [](const S& s) { return s.shard ? Written{{"index", s.shard->index}, {"count", s.shard->count}} : Written(); },
           [](S& s, const Read& value, const std::string& where) {
             if (value.is_null()) {
               s.shard.reset();
               return;
             }
             if (!value.is_object() || !value.contains("index") || !value.contains("count"))
               bad_value(where, "null or {\"index\": i, \"count\": n}", value);
             Shard shard;
             decode(value["index"], shard.index, where + " \"index\"");
             decode(value["count"], shard.count, where + " \"count\"");
             if (shard.count == 0 || shard.index >= shard.count) bad_value(where, "a shard with index < count", value);
             s.shard = shard;
           },
           true},
          &S::shard};
}

// Names and scopes: how the info columns were summarized, which merging shards repeats. Python
// passes the collectors to profile().
SettingsStorage info_collectors_field() {
  return {{"info_collectors",
           [](const S& s) {
             Written list = Written::array();
             for (const auto& c : s.info_collectors) list.push_back({{"name", c.name}, {"scope", to_string(c.scope)}});
             return list;
           },
           [](S& s, const Read& value, const std::string& where) {
             if (!value.is_array()) bad_value(where, "a list of {\"name\", \"scope\"}", value);
             s.info_collectors.clear();
             for (const Read& item : value) {
               if (!item.is_object() || !item.contains("name") || !item.contains("scope"))
                 bad_value(where, "a list of {\"name\", \"scope\"}", value);
               InfoCollector c;
               decode(item["name"], c.name, where + " \"name\"");
               decode(item["scope"], c.scope, where + " \"scope\"");
               s.info_collectors.push_back(std::move(c));
             }
           },
           true},
          {}};
}

bool fixed_runs(const S& s) { return s.sampling == Sampling::fixed; }
bool adaptive_runs(const S& s) { return s.sampling == Sampling::adaptive; }
bool measures_energy(const S& s) { return !energy_metrics_requested(s.metrics).empty(); }

// ---- Each field's own check (Settings::validate checks the fields together) ----------------------

void check_per_config(const std::string& field, std::size_t runs) {
  if (runs > kMaxRunsPerConfig)
    throw ConfigError(option(field) + " is " + std::to_string(runs) + "; at most " +
                      std::to_string(kMaxRunsPerConfig) + " runs per config are supported");
}

void check_runs(const S& s) {
  if (s.runs == 0) throw ConfigError(option("runs") + " is 0; at least one recorded run per config is needed");
  check_per_config("runs", s.runs);
}

void check_warmup_runs(const S& s) { check_per_config("warmup_runs", s.warmup_runs); }

// The rest of adaptive sampling's fields: the SamplingPlan's constructor.
void check_adaptive(const S& s) {
  if (adaptive_runs(s)) check_per_config("adaptive.max_runs", s.adaptive.max_runs);
}

void check_ignore_kernel_list(const S& s) {
  for (const auto& k : s.ignore_kernel_list)
    if (k.empty()) throw ConfigError(option("ignore_kernel_list") + " contains an empty kernel name");
}

void check_stable_rsd_pct(const S& s) {
  if (!(s.stable_rsd_pct > 0))
    throw ConfigError(option("stable_rsd_pct") + " must be a positive percentage (the default is 2.0)");
}

void check_shard(const S& s) {
  if (s.shard && (s.shard->count == 0 || s.shard->index >= s.shard->count))
    throw ConfigError(option("shard") + " is " + std::to_string(s.shard->index) + " of " +
                      std::to_string(s.shard->count) + ": give an index from 0 to count - 1 and a count of at least 1");
}

void check_fsync_interval_s(const S& s) {
  if (!(s.fsync_interval_s >= 0) || std::isinf(s.fsync_interval_s))
    throw ConfigError(option("fsync_interval_s") + " must be 0 (flush after every config) or a number of seconds "
                      "(the default is 1.0)");
}

// The value compared: null where the field changes nothing.
nlohmann::ordered_json compared_value(const SettingsField& f, const S& s) {
  return !f.in_use || f.in_use(s) ? f.json.write(s) : nlohmann::ordered_json();
}

std::vector<SettingsField> make_settings_fields() {
  using A = AdaptiveSampling;
  using T = BoundThresholds;
  constexpr bool saved = true, unsaved = false;
  // The saved fields in the order results.json lists them.
  return {
      {stored("runs", &S::runs), "runs", "int", Role::measurement, saved, "recorded runs per config", fixed_runs,
       check_runs},
      {stored("warmup_runs", &S::warmup_runs), "warmup_runs", "int", Role::measurement, saved,
       "runs per config before recording", nullptr, check_warmup_runs},
      {stored("backend", &S::backend), "backend", "Backend", Role::measurement, saved, "what measures"},
      {stored("metrics", &S::metrics), "metrics", "list[str]", Role::measurement, saved,
       "metric names; empty: the backend's default"},
      {stored("replay_mode", &S::replay_mode), "replay_mode", "ReplayMode", Role::measurement, saved,
       "one result per kernel or per region"},
      // For the kept report's GUI: the table holds `metrics`.
      {stored("ncu_sections", &S::ncu_sections), "ncu_sections", "list[str]", Role::session, saved,
       "Nsight Compute sections of the kept .ncu-rep"},
      {stored("cache_control", &S::cache_control), "cache_control", "CacheControl", Role::measurement, saved,
       "flush the L2 before each region, or not"},
      {stored("clock_control", &S::clock_control), "clock_control", "ClockControl", Role::measurement, saved,
       "lock the SM clock to base, or not"},
      {stored("ignore_kernel_list", &S::ignore_kernel_list), "ignore_kernel_list", "list[str]", Role::measurement,
       saved, "kernels dropped before attribution", nullptr, check_ignore_kernel_list},
      {whether_set("combine_kernel_metrics", &S::combine_kernel_metrics), "combine_kernel_metrics", "",
       Role::measurement, unsaved, "reduces several kernels of one region"},
      {whether_set("derive_metric", &S::derive_metric), "derive_metric", "", Role::measurement, unsaved,
       "values computed from each run's"},
      {stored("normalize_against", &S::normalize_against), "normalize_against", "str", Role::summary, saved,
       "annotation whose AvgValue divides the others'"},
      {stored("sampling", &S::sampling), "adaptive", "Sampling", Role::measurement, saved, "fixed runs, or adaptive"},
      {stored("adaptive", &S::adaptive,
              {
                  field<A>("criterion", [](auto& a) -> auto& { return a.criterion; }),
                  field<A>("target_pct", [](auto& a) -> auto& { return a.target_pct; }),
                  field<A>("min_runs", [](auto& a) -> auto& { return a.min_runs; }),
                  field<A>("max_runs", [](auto& a) -> auto& { return a.max_runs; }),
                  field<A>("config_budget_s", [](auto& a) -> auto& { return a.config_budget_s; }),
                  field<A>("timeout_s", [](auto& a) -> auto& { return a.timeout_s; }),
              }),
       "adaptive", "AdaptiveSampling", Role::measurement, saved, "when adaptive sampling stops", adaptive_runs,
       check_adaptive},
      {stored("throttled_runs", &S::throttled_runs), "throttled_runs", "ThrottledRuns", Role::measurement, saved,
       "whether throttled runs enter the statistics"},
      {stored("stable_rsd_pct", &S::stable_rsd_pct), "", "float", Role::summary, saved,
       "StableMeasurement below this relative standard deviation", nullptr, check_stable_rsd_pct},
      {added_later(stored("energy_window_s", &S::energy_window_s)), "energy_window", "float", Role::measurement, saved,
       "seconds of back-to-back runs per energy sample", measures_energy},
      {added_later(stored("bound_thresholds", &S::bound_thresholds,
                          {
                              field<T>("memory_pct", [](auto& t) -> auto& { return t.memory_pct; }),
                              field<T>("compute_pct", [](auto& t) -> auto& { return t.compute_pct; }),
                          })),
       "bound_thresholds", "BoundThresholds", Role::summary, saved, "when a roofline row is memory- or compute-bound",
       nullptr, [](const S& s) { check_bound_thresholds(s.bound_thresholds); }},
      // With the energy metrics the work gives each run FLOP/J and bytes/J; otherwise only the summary's
      // roofline columns, which a resume computes anew.
      {whether_set("work", &S::work), "work", "", Role::measurement, unsaved,
       "the bytes and FLOPs each annotation must move and do", measures_energy},
      // Which part of the sweep, not how it was measured: resume and merge check it themselves.
      {shard_field(), "shard", "tuple[int, int] | None", Role::session, saved, "measure only this shard's configs",
       nullptr, check_shard},
      {info_collectors_field(), "info_collectors", "", Role::measurement, saved,
       "callbacks whose values become extra columns"},
      {not_recorded("info_collector_errors", &S::info_collector_errors), "info_collector_errors", "InfoCollectorErrors",
       Role::session, unsaved, "what a collector that throws does"},
      {not_recorded("thermal_mode", &S::thermal_mode), "thermal_mode", "ThermalMode", Role::session, unsaved,
       "pausing while the GPU is near its thermal limit"},
      {not_recorded("thermal_wait_c", &S::thermal_wait_c), "thermal_wait", "float", Role::session, unsaved,
       "pause at this T.Limit margin"},
      {not_recorded("thermal_cont_c", &S::thermal_cont_c), "thermal_cont", "float", Role::session, unsaved,
       "resume at this margin"},
      {not_recorded("thermal_timeout_s", &S::thermal_timeout_s), "thermal_timeout", "float", Role::session, unsaved,
       "longest pause"},
      {not_recorded("verbosity", &S::verbosity), "verbosity", "Verbosity", Role::session, unsaved,
       "how much is printed"},
      {not_recorded("progress_observer"), "", "", Role::session, unsaved, "receives the progress instead of stderr"},
      {not_recorded("device", &S::device), "", "int", Role::session, unsaved, "CUDA ordinal; -1: the current device"},
      {not_recorded("output_prefix", &S::output_prefix), "output_prefix", "str", Role::session, unsaved,
       "where the files go"},
      {not_recorded("resume", &S::resume), "resume", "bool", Role::session, unsaved,
       "continue the sweep streamed there"},
      {not_recorded("fsync_interval_s", &S::fsync_interval_s), "fsync_interval_s", "float", Role::session, unsaved,
       "longest time between flushes to the disk", nullptr, check_fsync_interval_s},
      {not_recorded("overwrite", &S::overwrite), "overwrite", "bool", Role::session, unsaved,
       "replace an earlier sweep's files"},
  };
}

bool in(SettingsRole role, std::initializer_list<SettingsRole> roles) {
  return std::find(roles.begin(), roles.end(), role) != roles.end();
}

}  // namespace

std::string to_string(SettingsRole role) { return enum_name(role); }

const std::vector<SettingsField>& settings_fields() {
  static const auto fields = make_settings_fields();
  return fields;
}

const SettingsField* find_settings_field(const std::string& name) {
  for (const auto& f : settings_fields())
    if (f.json.key == name) return &f;
  return nullptr;
}

std::vector<SettingsFieldInfo> settings_field_infos() {
  std::vector<SettingsFieldInfo> out;
  for (const auto& f : settings_fields())
    out.push_back({f.json.key, f.python_name, f.python_type, to_string(f.role), f.doc, f.member});
  return out;
}

nlohmann::ordered_json settings_json(const Settings& settings, std::initializer_list<SettingsRole> roles) {
  nlohmann::ordered_json out = nlohmann::ordered_json::object();
  for (const auto& f : settings_fields())
    if (in(f.role, roles) && f.json.write) out[f.json.key] = compared_value(f, settings);
  return out;
}

std::vector<std::string> settings_differences(const Settings& a, const Settings& b,
                                              std::initializer_list<SettingsRole> roles) {
  std::vector<std::string> out;
  for (const auto& f : settings_fields()) {
    if (!in(f.role, roles) || !f.saved) continue;
    const auto in_a = compared_value(f, a), in_b = compared_value(f, b);
    if (in_a != in_b) out.push_back(option(f.json.key) + ": " + in_a.dump() + " and " + in_b.dump());
  }
  return out;
}

}  // namespace kscope::detail

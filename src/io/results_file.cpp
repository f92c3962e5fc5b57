// kscope's results file: Results::write_json and load_results. A versioned JSON document whose
// fields are listed once here, each with how it is written and read back, so that what is saved
// is exactly what loads. Its fields are its own contract: a new table column does not change the
// file until it is added here, with a new format version.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <functional>
#include <limits>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "base/files.hpp"
#include "base/json_error.hpp"
#include "base/text.hpp"
#include "core/caller.hpp"
#include "core/sample_text.hpp"
#include "io/results_file.hpp"
#include "kscope/backend_registry.hpp"
#include "kscope/errors.hpp"
#include "kscope/results.hpp"

namespace kscope {
namespace {

using Written = nlohmann::ordered_json;  // keeps the fields in their listed order
using Read = nlohmann::json;

constexpr const char* kFormat = "kscope-results";
constexpr int kVersion = 1;

// The command line serves both languages: it names both.
std::string saved_by() {
  if (detail::caller() == detail::Caller::command_line) return "Results::write_json (C++) or ProfileResults.save (Python)";
  return detail::spell("Results::write_json", "ProfileResults.save");
}
std::string loaded_by() { return detail::spell("load_results", "kscope.load"); }

[[noreturn]] void bad_value(const std::string& where, const char* expected, const Read& got) {
  throw ConfigError(where + " must be " + expected + ", not " + got.dump());
}

// ---- Values -------------------------------------------------------------------------------------
// Reals: null for NaN and "Infinity" / "-Infinity" for the infinities, which strict JSON lacks.

Written encode(double v) {
  if (std::isnan(v)) return nullptr;
  if (std::isinf(v)) return v > 0 ? "Infinity" : "-Infinity";
  return v;
}
Written encode(const std::string& v) { return v; }
Written encode(std::size_t v) { return v; }
Written encode(bool v) { return v; }
Written encode(const std::optional<bool>& v) { return v ? Written(*v) : Written(); }
Written encode(const std::vector<std::string>& v) { return v; }
Written encode(const std::vector<double>& v) {
  Written out = Written::array();
  for (double x : v) out.push_back(encode(x));
  return out;
}

void decode(const Read& j, double& out, const std::string& where) {
  if (j.is_number()) out = j.get<double>();
  else if (j.is_null()) out = std::numeric_limits<double>::quiet_NaN();
  else if (j == "Infinity") out = std::numeric_limits<double>::infinity();
  else if (j == "-Infinity") out = -std::numeric_limits<double>::infinity();
  else bad_value(where, "a number, null, \"Infinity\" or \"-Infinity\"", j);
}
void decode(const Read& j, std::string& out, const std::string& where) {
  if (!j.is_string()) bad_value(where, "a string", j);
  out = j.get<std::string>();
}
void decode(const Read& j, std::size_t& out, const std::string& where) {
  if (!j.is_number_unsigned()) bad_value(where, "a non-negative integer", j);
  out = j.get<std::size_t>();
}
void decode(const Read& j, bool& out, const std::string& where) {
  if (!j.is_boolean()) bad_value(where, "true or false", j);
  out = j.get<bool>();
}
void decode(const Read& j, std::optional<bool>& out, const std::string& where) {
  if (!j.is_boolean() && !j.is_null()) bad_value(where, "true, false or null", j);
  out = j.is_null() ? std::nullopt : std::optional<bool>(j.get<bool>());
}
void decode(const Read& j, std::vector<std::string>& out, const std::string& where) {
  if (!j.is_array()) bad_value(where, "a list of strings", j);
  out.clear();
  for (const Read& item : j) {
    if (!item.is_string()) bad_value(where, "a list of strings", j);
    out.push_back(item.get<std::string>());
  }
}

void decode(const Read& j, std::vector<double>& out, const std::string& where) {
  if (!j.is_array()) bad_value(where, "a list of numbers", j);
  out.assign(j.size(), 0.0);
  for (std::size_t i = 0; i < j.size(); ++i) decode(j[i], out[i], where);
}

// An info collector's cell keeps its type: null, an integer, a real (a non-finite one as
// {"real": "NaN" | "Infinity" | "-Infinity"}, unlike a text cell), a string or a boolean.
Written encode(const Cell& cell) {
  if (const double* v = std::get_if<double>(&cell); v && !std::isfinite(*v))
    return Written{{"real", std::isnan(*v) ? "NaN" : *v > 0 ? "Infinity" : "-Infinity"}};
  return std::visit(
      [](const auto& v) -> Written {
        if constexpr (std::is_same_v<std::decay_t<decltype(v)>, std::monostate>) return nullptr;
        else return v;
      },
      cell);
}
Cell decode_cell(const Read& c, const std::string& where) {
  if (c.is_null()) return std::monostate{};
  if (c.is_boolean()) return c.get<bool>();
  if (c.is_number_unsigned() && c.get<std::uint64_t>() > INT64_MAX) bad_value(where, "a 64-bit integer", c);
  if (c.is_number_integer()) return c.get<std::int64_t>();
  if (c.is_number_float()) return c.get<double>();
  if (c.is_string()) return c.get<std::string>();
  if (c == Read{{"real", "NaN"}}) return std::numeric_limits<double>::quiet_NaN();
  if (c == Read{{"real", "Infinity"}}) return std::numeric_limits<double>::infinity();
  if (c == Read{{"real", "-Infinity"}}) return -std::numeric_limits<double>::infinity();
  bad_value(where, "null, a number, a string, a boolean or {\"real\": \"NaN\"}", c);
}

// A row's info cells as {column: cell}, in the order of "info_columns".
Written encode_info(const std::vector<Cell>& cells, const std::vector<std::string>& columns) {
  Written out = Written::object();
  for (std::size_t i = 0; i < cells.size() && i < columns.size(); ++i) out[columns[i]] = encode(cells[i]);
  return out;
}

std::vector<Cell> decode_info(const Read& j, const std::vector<std::string>& columns, const std::string& where) {
  if (!j.is_object()) bad_value(where, "an object of the info collectors' cells", j);
  std::vector<Cell> cells;
  for (const auto& column : columns) {
    const auto found = j.find(column);
    if (found == j.end()) throw ConfigError(where + " has no \"" + column + "\" (a column of \"info_columns\")");
    cells.push_back(decode_cell(*found, where + " \"" + column + "\""));
  }
  return cells;
}

// ---- Enumerations, by name ---------------------------------------------------------------------

template <typename E>
using Names = std::vector<std::pair<E, std::string>>;

template <typename E>
Names<E> named_by_to_string(std::initializer_list<E> values) {
  Names<E> names;
  for (E v : values) names.emplace_back(v, to_string(v));
  return names;
}

// Backends by their names in the backend registry, which a program may extend: read at each use.
Names<Backend> names(Backend) {
  Names<Backend> n;
  for (const Backend b : registered_backends()) n.emplace_back(b, to_string(b));
  return n;
}
const Names<CacheControl>& names(CacheControl) {
  static const auto n = named_by_to_string({CacheControl::all, CacheControl::none});
  return n;
}
const Names<ClockControl>& names(ClockControl) {
  static const auto n = named_by_to_string({ClockControl::none, ClockControl::base});
  return n;
}
const Names<ReplayMode>& names(ReplayMode) {
  static const auto n = named_by_to_string({ReplayMode::kernel, ReplayMode::range});
  return n;
}
const Names<Sampling>& names(Sampling) {
  static const Names<Sampling> n{{Sampling::fixed, "fixed"}, {Sampling::adaptive, "adaptive"}};
  return n;
}
const Names<StopCriterion>& names(StopCriterion) {
  static const Names<StopCriterion> n{{StopCriterion::ci_halfwidth, "ci_halfwidth"}, {StopCriterion::rsd, "rsd"}};
  return n;
}
const Names<CollectionScope>& names(CollectionScope) {
  static const auto n = named_by_to_string({CollectionScope::once, CollectionScope::config, CollectionScope::run,
                                            CollectionScope::annotation});
  return n;
}
const Names<ThrottledRuns>& names(ThrottledRuns) {
  static const Names<ThrottledRuns> n{{ThrottledRuns::keep, "keep"}, {ThrottledRuns::exclude, "exclude"}};
  return n;
}

template <typename E>
  requires requires(E v) { names(v); }
Written encode(E v) {
  for (const auto& [value, name] : names(v))
    if (value == v) return name;
  throw InternalError("an enumerator without a name in the results file (kscope bug: please report it)");
}

template <typename E>
  requires requires(E v) { names(v); }
void decode(const Read& j, E& out, const std::string& where) {
  std::string listed;
  for (const auto& [value, name] : names(out)) {
    if (j == name) {
      out = value;
      return;
    }
    listed += (listed.empty() ? "\"" : " or \"") + name + "\"";
  }
  bad_value(where, listed.c_str(), j);
}

// ---- Fields -------------------------------------------------------------------------------------

template <typename Row>
struct Field {
  std::string key;
  std::function<Written(const Row&)> write;
  std::function<void(Row&, const Read&, const std::string& where)> read;  // empty: written only
  bool optional = false;  // added after the format's first files: absent keeps the default
  detail::SamplePart part = detail::SamplePart::row;  // sample fields: the part of the row written
};

// A field stored as it is: `access` is a generic lambda returning a reference to it.
template <typename Row, typename Access>
Field<Row> field(std::string key, Access access) {
  return {key, [access](const Row& row) { return encode(access(row)); },
          [access](Row& row, const Read& value, const std::string& where) { decode(value, access(row), where); }};
}

// A field added after the format's first files: a file without it loads with the default.
template <typename Row>
Field<Row> added_later(Field<Row> f) {
  f.optional = true;
  return f;
}

template <typename Row>
Written write_object(const Row& row, const std::vector<Field<Row>>& fields) {
  Written object = Written::object();
  for (const auto& f : fields) object[f.key] = f.write(row);
  return object;
}

template <typename Row>
void read_object(const Read& object, Row& row, const std::vector<Field<Row>>& fields, const std::string& where) {
  if (!object.is_object()) bad_value(where, "an object", object);
  for (const auto& f : fields) {
    if (!f.read) continue;
    const auto found = object.find(f.key);
    if (found == object.end() && f.optional) continue;
    if (found == object.end()) throw ConfigError(where + " has no \"" + f.key + "\"");
    f.read(row, *found, where + " \"" + f.key + "\"");
  }
}

// A field holding an object of its own fields.
template <typename Row, typename Inner, typename Access>
Field<Row> nested(std::string key, Access access, std::vector<Field<Inner>> fields) {
  return {key, [access, fields](const Row& row) { return write_object(access(row), fields); },
          [access, fields](Row& row, const Read& value, const std::string& where) {
            read_object(value, access(row), fields, where);
          }};
}

const std::vector<Field<SessionInfo>>& session_fields() {
  using S = SessionInfo;
  static const std::vector<Field<S>> fields{
      field<S>("backend", [](auto& s) -> auto& { return s.backend; }),
      field<S>("replay_passes", [](auto& s) -> auto& { return s.replay_passes; }),
      field<S>("cache_control", [](auto& s) -> auto& { return s.cache_control; }),
      field<S>("clock_control", [](auto& s) -> auto& { return s.clock_control; }),
      {"mode", [](const S& s) { return Written(s.mode()); }, {}},  // for readers: follows from the two above
      field<S>("locked_sm_clock_mhz", [](auto& s) -> auto& { return s.locked_sm_clock_mhz; }),
      field<S>("locked_memory_clock_mhz", [](auto& s) -> auto& { return s.locked_memory_clock_mhz; }),
      field<S>("thermal_pauses", [](auto& s) -> auto& { return s.thermal_pauses; }),
      field<S>("thermal_pause_s", [](auto& s) -> auto& { return s.thermal_pause_s; }),
      field<S>("gpu", [](auto& s) -> auto& { return s.gpu; }),
      field<S>("gpu_uuid", [](auto& s) -> auto& { return s.gpu_uuid; }),
      field<S>("driver_version", [](auto& s) -> auto& { return s.driver_version; }),
      field<S>("host", [](auto& s) -> auto& { return s.host; }),
      field<S>("rated_sm_clock_mhz", [](auto& s) -> auto& { return s.rated_sm_clock_mhz; }),
      field<S>("rated_memory_clock_mhz", [](auto& s) -> auto& { return s.rated_memory_clock_mhz; }),
      field<S>("report_path", [](auto& s) -> auto& { return s.report_path; }),
      added_later(field<S>("metrics", [](auto& s) -> auto& { return s.metrics; })),
      added_later(field<S>("idle_power_w", [](auto& s) -> auto& { return s.idle_power_w; })),
      added_later(field<S>("flush_energy_j", [](auto& s) -> auto& { return s.flush_energy_j; })),
      added_later(field<S>("energy_update_s", [](auto& s) -> auto& { return s.energy_update_s; })),
      added_later(field<S>("started_at", [](auto& s) -> auto& { return s.started_at; })),
      added_later(field<S>("load_avg", [](auto& s) -> auto& { return s.load_avg; })),
      added_later(field<S>("sm_count", [](auto& s) -> auto& { return s.sm_count; })),
      added_later(field<S>("compute_capability", [](auto& s) -> auto& { return s.compute_capability; })),
      added_later(field<S>("memory_bus_width_bits", [](auto& s) -> auto& { return s.memory_bus_width_bits; })),
  };
  return fields;
}

// What decides what the numbers mean and how they were sampled; the callables cannot be saved, and
// how the session printed, where it wrote and its thermal guard do not change the numbers.
const std::vector<Field<Settings>>& settings_fields() {
  using S = Settings;
  using A = AdaptiveSampling;
  static const std::vector<Field<S>> fields{
      field<S>("runs", [](auto& s) -> auto& { return s.runs; }),
      field<S>("warmup_runs", [](auto& s) -> auto& { return s.warmup_runs; }),
      field<S>("backend", [](auto& s) -> auto& { return s.backend; }),
      field<S>("metrics", [](auto& s) -> auto& { return s.metrics; }),
      field<S>("replay_mode", [](auto& s) -> auto& { return s.replay_mode; }),
      field<S>("ncu_sections", [](auto& s) -> auto& { return s.ncu_sections; }),
      field<S>("cache_control", [](auto& s) -> auto& { return s.cache_control; }),
      field<S>("clock_control", [](auto& s) -> auto& { return s.clock_control; }),
      field<S>("ignore_kernel_list", [](auto& s) -> auto& { return s.ignore_kernel_list; }),
      field<S>("normalize_against", [](auto& s) -> auto& { return s.normalize_against; }),
      field<S>("sampling", [](auto& s) -> auto& { return s.sampling; }),
      nested<S, A>("adaptive", [](auto& s) -> auto& { return s.adaptive; },
                   {
                       field<A>("criterion", [](auto& a) -> auto& { return a.criterion; }),
                       field<A>("target_pct", [](auto& a) -> auto& { return a.target_pct; }),
                       field<A>("min_runs", [](auto& a) -> auto& { return a.min_runs; }),
                       field<A>("max_runs", [](auto& a) -> auto& { return a.max_runs; }),
                       field<A>("config_budget_s", [](auto& a) -> auto& { return a.config_budget_s; }),
                       field<A>("timeout_s", [](auto& a) -> auto& { return a.timeout_s; }),
                   }),
      field<S>("throttled_runs", [](auto& s) -> auto& { return s.throttled_runs; }),
      field<S>("stable_rsd_pct", [](auto& s) -> auto& { return s.stable_rsd_pct; }),
      added_later(field<S>("energy_window_s", [](auto& s) -> auto& { return s.energy_window_s; })),
      added_later(nested<S, BoundThresholds>(
          "bound_thresholds", [](auto& s) -> auto& { return s.bound_thresholds; },
          {
              field<BoundThresholds>("memory_pct", [](auto& t) -> auto& { return t.memory_pct; }),
              field<BoundThresholds>("compute_pct", [](auto& t) -> auto& { return t.compute_pct; }),
          })),
      {"shard", [](const S& s) { return s.shard ? Written{{"index", s.shard->index}, {"count", s.shard->count}} : Written(); },
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
      // Names and scopes: how the info columns were summarized, which merging shards repeats.
      {"info_collectors",
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
  };
  return fields;
}

// A number of the row's declared work (null without one): the first of its fields read creates it.
Field<SummaryRow> work_field(std::string key, double Work::*member) {
  return {key, [member](const SummaryRow& r) { return r.work ? encode((*r.work).*member) : Written(); },
          [member](SummaryRow& r, const Read& value, const std::string& where) {
            if (value.is_null()) return;
            if (!r.work) r.work.emplace();
            decode(value, (*r.work).*member, where);
          },
          true};
}

// Summary and sample rows name their config by its index in "configs"; the keys are the table
// columns' names, plus Config, Mean (the un-normalized mean behind a normalized AvgValue) and Info
// (the info collectors' cells by column, as "info_columns" lists them).
const std::vector<Field<SummaryRow>>& summary_fields() {
  using R = SummaryRow;
  static const std::vector<Field<R>> fields{
      field<R>("Annotation", [](auto& r) -> auto& { return r.annotation; }),
      field<R>("Config", [](auto& r) -> auto& { return r.config_index; }),
      field<R>("Metric", [](auto& r) -> auto& { return r.metric; }),
      field<R>("Unit", [](auto& r) -> auto& { return r.unit; }),
      field<R>("AvgValue", [](auto& r) -> auto& { return r.avg_value; }),
      field<R>("Mean", [](auto& r) -> auto& { return r.stats.mean; }),
      field<R>("StdDev", [](auto& r) -> auto& { return r.stats.stddev; }),
      field<R>("MinValue", [](auto& r) -> auto& { return r.stats.min; }),
      field<R>("MaxValue", [](auto& r) -> auto& { return r.stats.max; }),
      field<R>("Median", [](auto& r) -> auto& { return r.stats.median; }),
      field<R>("Q1", [](auto& r) -> auto& { return r.stats.q1; }),
      field<R>("Q3", [](auto& r) -> auto& { return r.stats.q3; }),
      field<R>("IQR", [](auto& r) -> auto& { return r.stats.iqr; }),
      field<R>("P20", [](auto& r) -> auto& { return r.stats.p20; }),
      field<R>("P80", [](auto& r) -> auto& { return r.stats.p80; }),
      field<R>("Outliers", [](auto& r) -> auto& { return r.stats.outliers; }),
      field<R>("NumRuns", [](auto& r) -> auto& { return r.stats.count; }),
      field<R>("CI95_Lower", [](auto& r) -> auto& { return r.stats.ci95_lower; }),
      field<R>("CI95_Upper", [](auto& r) -> auto& { return r.stats.ci95_upper; }),
      field<R>("RelativeStdDevPct", [](auto& r) -> auto& { return r.stats.rsd_pct; }),
      field<R>("StableMeasurement", [](auto& r) -> auto& { return r.stats.stable; }),
      {"Normalized", [](const R& r) { return r.normalized.empty() ? Written(false) : Written(r.normalized); },
       [](R& r, const Read& value, const std::string& where) {  // as in the table: false, or the baseline
         if (value == false) r.normalized.clear();
         else if (value.is_string() && !value.get<std::string>().empty()) r.normalized = value.get<std::string>();
         else bad_value(where, "false or the name of the baseline annotation", value);
       }},
      field<R>("NormalizationValue", [](auto& r) -> auto& { return r.normalization_value; }),
      field<R>("Geomean", [](auto& r) -> auto& { return r.geomean; }),
      field<R>("Kernel", [](auto& r) -> auto& { return r.kernel; }),
      field<R>("ObservedSMClockMHz", [](auto& r) -> auto& { return r.observed_sm_clock_mhz; }),
      field<R>("ObservedMemoryClockMHz", [](auto& r) -> auto& { return r.observed_memory_clock_mhz; }),
      field<R>("ThrottledRuns", [](auto& r) -> auto& { return r.throttled_runs; }),
      field<R>("Converged", [](auto& r) -> auto& { return r.converged; }),
      field<R>("ThermalPauses", [](auto& r) -> auto& { return r.thermal_pauses; }),
      work_field("WorkBytes", &Work::bytes),
      work_field("WorkFLOPs", &Work::flops),
      {"WorkKind", [](const R& r) { return r.work ? Written(to_string(r.work->kind)) : Written(); },
       [](R& r, const Read& value, const std::string& where) {
         if (value.is_null()) return;
         const auto kind = value.is_string() ? parse_flop_kind(value.get<std::string>()) : std::nullopt;
         if (!kind) bad_value(where, "null or a kind such as \"fp32\" or \"fp16 tensor\"", value);
         if (!r.work) r.work.emplace();
         r.work->kind = *kind;
       },
       true},
      added_later(field<R>("ArithmeticIntensity", [](auto& r) -> auto& { return r.roofline.arithmetic_intensity; })),
      added_later(field<R>("AchievedGBps", [](auto& r) -> auto& { return r.roofline.achieved_gbps; })),
      added_later(field<R>("DRAMRoofGBps", [](auto& r) -> auto& { return r.roofline.dram_roof_gbps; })),
      added_later(field<R>("DRAMRoofPct", [](auto& r) -> auto& { return r.roofline.dram_pct.mean; })),
      added_later(field<R>("DRAMRoofPct_CI95_Lower", [](auto& r) -> auto& { return r.roofline.dram_pct.ci95_lower; })),
      added_later(field<R>("DRAMRoofPct_CI95_Upper", [](auto& r) -> auto& { return r.roofline.dram_pct.ci95_upper; })),
      added_later(field<R>("AchievedTFLOPs", [](auto& r) -> auto& { return r.roofline.achieved_tflops; })),
      added_later(field<R>("ComputeRoofTFLOPs", [](auto& r) -> auto& { return r.roofline.compute_roof_tflops; })),
      added_later(field<R>("ComputeRoofPct", [](auto& r) -> auto& { return r.roofline.compute_pct.mean; })),
      added_later(field<R>("ComputeRoofPct_CI95_Lower", [](auto& r) -> auto& { return r.roofline.compute_pct.ci95_lower; })),
      added_later(field<R>("ComputeRoofPct_CI95_Upper", [](auto& r) -> auto& { return r.roofline.compute_pct.ci95_upper; })),
      {"Bound", [](const R& r) { return r.roofline.bound ? Written(to_string(*r.roofline.bound)) : Written(); },
       [](R& r, const Read& value, const std::string& where) {
         r.roofline.bound.reset();
         for (Bound b : {Bound::memory, Bound::compute, Bound::latency})
           if (value == to_string(b)) r.roofline.bound = b;
         if (!value.is_null() && !r.roofline.bound) bad_value(where, "null, \"memory\", \"compute\" or \"latency\"", value);
       },
       true},
  };
  return fields;
}

Field<SampleRow> showing(detail::SamplePart part, Field<SampleRow> field) {
  field.part = part;
  return field;
}

const std::vector<Field<SampleRow>>& sample_fields() {
  using R = SampleRow;
  using P = detail::SamplePart;
  static const std::vector<Field<R>> fields{
      showing(P::label, field<R>("Annotation", [](auto& r) -> auto& { return r.annotation; })),
      showing(P::config, field<R>("Config", [](auto& r) -> auto& { return r.config_index; })),
      showing(P::run, field<R>("Run", [](auto& r) -> auto& { return r.run; })),
      showing(P::label, field<R>("Metric", [](auto& r) -> auto& { return r.metric; })),
      showing(P::label, field<R>("Unit", [](auto& r) -> auto& { return r.unit; })),
      showing(P::value, field<R>("Value", [](auto& r) -> auto& { return r.value; })),
      showing(P::label, field<R>("Kernel", [](auto& r) -> auto& { return r.kernel; })),
      showing(P::conditions, field<R>("SMClockMHz", [](auto& r) -> auto& { return r.sm_clock_mhz; })),
      showing(P::conditions, field<R>("MemoryClockMHz", [](auto& r) -> auto& { return r.memory_clock_mhz; })),
      showing(P::conditions, field<R>("Throttled", [](auto& r) -> auto& { return r.throttled; })),
  };
  return fields;
}

// ---- Configs ------------------------------------------------------------------------------------
// "axes": [{"name": "n", "type": "integer"}, ...] and "configs": [[1024, "f32"], ...], so that an
// integer axis stays integer and a double axis double, whatever the JSON reader does with 2.0.

Written encode(const Value& v) {
  switch (v.type()) {
    case ValueType::integer: return v.as_int();
    case ValueType::real: return encode(v.as_double());
    case ValueType::text: return v.as_string();
    case ValueType::boolean: return v.as_bool();
  }
  throw InternalError("a config value of no known type (kscope bug: please report it)");
}

Value decode_value(const Read& j, ValueType type, const std::string& where) {
  switch (type) {
    case ValueType::integer:
      if (!j.is_number_integer() || (j.is_number_unsigned() && j.get<std::uint64_t>() > INT64_MAX))
        bad_value(where, "an integer", j);
      return Value(static_cast<long long>(j.get<std::int64_t>()));
    case ValueType::real: {
      double v = 0;
      decode(j, v, where);
      return Value(v);
    }
    case ValueType::text: {
      std::string v;
      decode(j, v, where);
      return Value(std::move(v));
    }
    case ValueType::boolean: {
      bool v = false;
      decode(j, v, where);
      return Value(v);
    }
  }
  throw InternalError("a config axis of no known type (kscope bug: please report it)");
}

ValueType decode_type(const Read& j, const std::string& where) {
  for (ValueType t : {ValueType::integer, ValueType::real, ValueType::text, ValueType::boolean})
    if (j == std::string(to_string(t))) return t;
  bad_value(where, "\"integer\", \"double\", \"string\" or \"bool\"", j);
}

std::vector<Config> read_configs(const Read& doc, const std::string& file) {
  const Read& axes = doc.at("axes");
  const Read& configs = doc.at("configs");
  if (!axes.is_array()) bad_value(file + ": \"axes\"", "a list", axes);
  if (!configs.is_array()) bad_value(file + ": \"configs\"", "a list", configs);
  auto names = std::make_shared<std::vector<std::string>>();
  std::vector<ValueType> types;
  for (std::size_t a = 0; a < axes.size(); ++a) {
    const std::string where = file + ": axis " + std::to_string(a);
    if (!axes[a].is_object() || !axes[a].contains("name") || !axes[a].contains("type"))
      bad_value(where, "an object with \"name\" and \"type\"", axes[a]);
    std::string name;
    decode(axes[a]["name"], name, where + " \"name\"");
    names->push_back(std::move(name));
    types.push_back(decode_type(axes[a]["type"], where + " \"type\""));
  }
  std::vector<Config> out;
  for (std::size_t c = 0; c < configs.size(); ++c) {
    const std::string where = file + ": config " + std::to_string(c);
    if (!configs[c].is_array() || configs[c].size() != types.size())
      bad_value(where, ("a list of " + std::to_string(types.size()) + " values, one per axis").c_str(), configs[c]);
    std::vector<Value> values;
    for (std::size_t a = 0; a < types.size(); ++a)
      values.push_back(decode_value(configs[c][a], types[a], where + " \"" + (*names)[a] + "\""));
    out.emplace_back(names, std::move(values), c);
  }
  return out;
}

template <typename Row>
std::vector<Row> read_rows(const Read& doc, const char* key, const std::vector<Field<Row>>& fields,
                           std::size_t config_count, const std::vector<std::string>& info_columns,
                           const std::string& file) {
  const Read& array = doc.at(key);
  if (!array.is_array()) bad_value(file + ": \"" + key + "\"", "a list", array);
  std::vector<Row> rows;
  rows.reserve(array.size());
  for (std::size_t i = 0; i < array.size(); ++i) {
    const std::string where = file + ": " + key + " row " + std::to_string(i);
    Row row{};
    read_object(array[i], row, fields, where);
    if (row.config_index >= config_count)
      throw ConfigError(where + " \"Config\" is " + std::to_string(row.config_index) + ", but the file lists " +
                        std::to_string(config_count) + " configs");
    const auto info = array[i].find("Info");
    if (info == array[i].end()) throw ConfigError(where + " has no \"Info\"");
    row.info = decode_info(*info, info_columns, where + " \"Info\"");
    rows.push_back(std::move(row));
  }
  return rows;
}

// Throws unless the document is kscope's results format in the version this kscope reads.
void check_format(const Read& doc, const std::string& file) {
  if (doc.is_object() && !doc.contains("format")) {
    if (doc.contains("benchmarks") && doc.contains("context"))
      throw ConfigError(file + " is Google Benchmark JSON: kscope writes that format for other tools, but loads "
                        "only its own results files (written by " + saved_by() + ")");
    if (doc.contains("session") && doc.contains("summary"))
      throw ConfigError(file + " was written by a kscope from before results files had a format version; " +
                        loaded_by() + " cannot read it. Measure again with this kscope (its \"summary\" and "
                        "\"samples\" tables remain readable as plain JSON)");
  }
  if (!doc.is_object() || doc.value("format", Read()) != kFormat)
    throw ConfigError(file + " is not a kscope results file (it has no \"format\": \"" + kFormat +
                      "\"); give a file written by " + saved_by());
  const Read& version = doc.value("version", Read());
  const Read& written_by = doc.value("kscope_version", Read());
  const std::string writer = written_by.is_string() ? written_by.get<std::string>() : "an unknown version";
  if (!version.is_number_integer())
    throw ConfigError(file + ": \"version\" must be the format's version number, not " + version.dump());
  if (version.get<std::int64_t>() > kVersion)
    throw ConfigError(file + " is in kscope results format version " + version.dump() + " (written by kscope " +
                      writer + "); this kscope (" KSCOPE_VERSION ") reads version " + std::to_string(kVersion) +
                      ": update kscope to load it");
  if (version.get<std::int64_t>() != kVersion)
    throw ConfigError(file + " is in kscope results format version " + version.dump() + " (written by kscope " +
                      writer + "), which this kscope (" KSCOPE_VERSION ") cannot read: it reads version " +
                      std::to_string(kVersion));
}

}  // namespace

namespace detail {

std::vector<std::string> measurement_differences(const Settings& a, const Settings& b) {
  std::vector<std::string> out;
  for (const auto& f : settings_fields()) {
    if (f.key == "shard") continue;
    const Written in_a = f.write(a), in_b = f.write(b);
    if (in_a != in_b) out.push_back(option(f.key) + ": " + in_a.dump() + " and " + in_b.dump());
  }
  return out;
}

}  // namespace detail

namespace {

// ---- Writing, piece by piece ---------------------------------------------------------------
// The document is written as Written::dump(1) prints it whole, one piece at a time, so that its
// size in memory does not grow with the sweep's: the objects of its first and middle members, then
// each element of its long lists.

// Invalid UTF-8 in a string (a mangled kernel name, say) becomes U+FFFD instead of throwing.
std::string dumped(const Written& j) { return j.dump(1, ' ', false, Written::error_handler_t::replace); }

// An object's members, as they are printed inside the document: "\n \"key\": value" each, commas
// between.
std::string members(const Written& object) {
  const std::string text = dumped(object);  // "{" members "\n}"
  return text.substr(1, text.size() - 3);
}

void indent(std::string& out, std::size_t depth) {
  out += '\n';
  out.append(depth, ' ');
}

}  // namespace

namespace detail {

void append_json(std::string& out, const Written& j, std::size_t depth) {
  char digits[64];
  switch (j.type()) {
    case Written::value_t::null: out += "null"; return;
    case Written::value_t::boolean: out += j.get<bool>() ? "true" : "false"; return;
    case Written::value_t::number_integer:
      out.append(digits, std::to_chars(digits, digits + sizeof digits, j.get<std::int64_t>()).ptr);
      return;
    case Written::value_t::number_unsigned:
      out.append(digits, std::to_chars(digits, digits + sizeof digits, j.get<std::uint64_t>()).ptr);
      return;
    case Written::value_t::number_float: {
      // dump's own shortest round-trip digits (Grisu2, not always std::to_chars'), without the
      // serializer that dump builds for every call.
      const double v = j.get<double>();
      if (!std::isfinite(v)) out += "null";
      else out.append(digits, nlohmann::detail::to_chars(digits, digits + sizeof digits, v));
      return;
    }
    case Written::value_t::string: {
      // Printable ASCII without quotes or backslashes is printed as it is; anything else is
      // escaped by dump.
      const auto& text = j.get_ref<const std::string&>();
      if (std::all_of(text.begin(), text.end(), [](char c) { return c >= 0x20 && c < 0x7f && c != '"' && c != '\\'; })) {
        out += '"';
        out += text;
        out += '"';
      } else {
        out += dumped(j);
      }
      return;
    }
    case Written::value_t::array:
    case Written::value_t::object: {
      const bool object = j.is_object();
      if (j.empty()) {
        out += object ? "{}" : "[]";
        return;
      }
      out += object ? '{' : '[';
      bool first = true;
      for (auto it = j.begin(); it != j.end(); ++it, first = false) {
        if (!first) out += ',';
        indent(out, depth + 1);
        if (object) {
          append_json(out, Written(it.key()), depth + 1);
          out += ": ";
        }
        append_json(out, *it, depth + 1);
      }
      indent(out, depth);
      out += object ? '}' : ']';
      return;
    }
    default: out += dumped(j); return;  // binary: never written by kscope
  }
}

}  // namespace detail

namespace {

// ",\n \"key\": [...]" with `count` elements, each the text `element` appends (at depth 2).
void write_list(std::ostream& out, const std::string& key, std::size_t count,
                const std::function<void(std::size_t, std::string&)>& element) {
  std::string text = ",\n " + dumped(key) + ": ";
  if (count == 0) {
    out << text << "[]";
    return;
  }
  text += "[";
  for (std::size_t i = 0; i < count; ++i) {
    if (i) text += ",";
    indent(text, 2);
    element(i, text);
    if (text.size() >= detail::kWriteChunk) {
      out << text;
      text.clear();
    }
  }
  out << text << "\n ]";
}

// A member of an object at `depth`: its separator from the member before, its key and its value.
void append_member(std::string& out, bool first, const std::string& key, const Written& value, std::size_t depth) {
  if (!first) out += ',';
  indent(out, depth + 1);
  out += key;
  out += ": ";
  detail::append_json(out, value, depth + 1);
}

// The sample objects of "samples", made from the store.
detail::SampleText sample_objects(const std::vector<std::string>& info_columns) {
  std::vector<detail::SampleText::Column> columns;
  bool first = true;
  for (const auto& f : sample_fields()) {
    columns.push_back({f.part, [&f, first, key = dumped(f.key)](const SampleRow& row, const SessionInfo&,
                                                                 std::string& out) {
                         append_member(out, first, key, f.write(row), 2);
                       }});
    first = false;
  }
  columns.push_back({detail::SamplePart::info, [&info_columns](const SampleRow& row, const SessionInfo&, std::string& out) {
                       append_member(out, false, "\"Info\"", encode_info(row.info, info_columns), 2);
                     }});
  return detail::SampleText(std::move(columns), "{", "\n  }");
}

}  // namespace

void Results::write_json(std::ostream& out) const {
  Written head;
  head["format"] = kFormat;
  head["version"] = kVersion;
  head["kscope_version"] = KSCOPE_VERSION;
  head["session"] = write_object(session_, session_fields());
  head["settings"] = write_object(settings_, settings_fields());
  head["axes"] = Written::array();
  for (const auto& name : axis_names())
    head["axes"].push_back({{"name", name}, {"type", to_string(configs_.front().at(name).type())}});
  out << "{" << members(head);
  write_list(out, "configs", configs_.size(), [&](std::size_t c, std::string& text) {
    Written values = Written::array();
    for (const Value& v : configs_[c].values()) values.push_back(encode(v));
    detail::append_json(text, values, 2);
  });
  Written middle;
  middle["info_columns"] = {{"summary", info_columns_.summary}, {"samples", info_columns_.samples}};
  middle["shard_sessions"] = Written::array();
  for (const auto& s : shard_sessions_) middle["shard_sessions"].push_back(write_object(s, session_fields()));
  out << "," << members(middle);
  std::vector<std::string> keys;
  for (const auto& f : summary_fields()) keys.push_back(dumped(f.key));
  write_list(out, "summary", rows_.size(), [&](std::size_t r, std::string& text) {
    text += "{";
    for (std::size_t k = 0; k < keys.size(); ++k) append_member(text, k == 0, keys[k], summary_fields()[k].write(rows_[r]), 2);
    append_member(text, keys.empty(), "\"Info\"", encode_info(rows_[r].info, info_columns_.summary), 2);
    text += "\n  }";
  });
  detail::SampleText samples = sample_objects(info_columns_.samples);
  const detail::SampleStore& store = samples_.store();
  write_list(out, "samples", samples_.size(), [&](std::size_t i, std::string& text) {
    samples.append(store, i, session_of(store.config(i)), text);
  });
  out << "\n}\n";
}

void Results::write_json(const std::string& path) const {
  detail::write_whole(path, [&](std::ostream& out) { write_json(out); });
}

Results load_results(const std::string& path) {
  std::ifstream in = detail::open_for_reading(path, "a file written by " + saved_by());
  return load_results(in, "'" + path + "'");
}

Results load_results(std::istream& in, const std::string& file) {
  Read doc;
  try {
    doc = Read::parse(in);
  } catch (const Read::parse_error& e) {
    throw ConfigError(file + " is not JSON (" + detail::json_error_text(e) + "); give a file written by " + saved_by());
  } catch (const std::ios_base::failure& e) {  // the file could be opened, not read
    throw FileError("cannot read " + file + ": " + e.code().message(), file, e.code());
  }
  check_format(doc, file);
  try {
    SessionInfo session;
    read_object(doc.at("session"), session, session_fields(), file + ": \"session\"");
    Settings settings;
    read_object(doc.at("settings"), settings, settings_fields(), file + ": \"settings\"");
    std::vector<Config> configs = read_configs(doc, file);
    InfoColumns info;
    const Read& info_columns = doc.at("info_columns");
    if (!info_columns.is_object()) bad_value(file + ": \"info_columns\"", "an object", info_columns);
    decode(info_columns.at("summary"), info.summary, file + ": \"info_columns\" \"summary\"");
    decode(info_columns.at("samples"), info.samples, file + ": \"info_columns\" \"samples\"");
    auto rows = read_rows(doc, "summary", summary_fields(), configs.size(), info.summary, file);
    auto samples = read_rows(doc, "samples", sample_fields(), configs.size(), info.samples, file);
    std::vector<SessionInfo> shard_sessions;
    const Read shards = doc.value("shard_sessions", Read::array());  // absent in files of unmerged results
    if (!shards.is_array()) bad_value(file + ": \"shard_sessions\"", "a list", shards);
    for (std::size_t i = 0; i < shards.size(); ++i)
      read_object(shards[i], shard_sessions.emplace_back(), session_fields(),
                  file + ": \"shard_sessions\" " + std::to_string(i));
    return Results(std::move(session), std::move(configs), std::move(rows), std::move(samples), std::move(info),
                   std::move(settings), std::move(shard_sessions));
  } catch (const Read::out_of_range& e) {  // doc.at(key) of a missing top-level key
    throw ConfigError(file + " is incomplete (" + detail::json_error_text(e) + "); give a file written by " +
                      saved_by());
  }
}

}  // namespace kscope

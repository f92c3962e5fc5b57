#include "kscope/results.hpp"

#include <cmath>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <ostream>

#include "io/json_table.hpp"
#include "kscope/errors.hpp"

namespace kscope {
namespace {

Cell to_cell(const Value& v) {
  switch (v.type()) {
    case ValueType::integer: return v.as_int();
    case ValueType::real: return v.as_double();
    case ValueType::text: return v.as_string();
    case ValueType::boolean: return v.as_bool();
  }
  return {};
}

Cell number(double v) { return std::isnan(v) ? Cell{} : Cell{v}; }

Cell optional_bool(const std::optional<bool>& b) { return b ? Cell{*b} : Cell{}; }

const std::vector<std::string> kNoAxes;

std::ofstream open_for_writing(const std::string& path) {
  std::ofstream out(path);
  if (!out) throw Error("cannot write '" + path + "': check that its directory exists and is writable");
  return out;
}

// Columns shared by both tables: annotation and config axes first, session facts last.
struct Layout {
  const Results& r;
  void head(std::vector<std::string>& cols) const {
    cols.push_back("Annotation");
    for (const auto& a : r.axis_names()) cols.push_back(a);
  }
  void head_cells(std::vector<Cell>& row, const std::string& annotation, std::size_t config) const {
    row.emplace_back(annotation);
    for (const auto& v : r.configs()[config].values()) row.push_back(to_cell(v));
  }
  static void tail(std::vector<std::string>& cols) {
    for (const char* c : {"GPU", "Host", "Backend", "ReplayPasses", "CacheControl", "ClockControl", "Mode", "RatedSMClockMHz",
                          "RatedMemoryClockMHz", "LockedSMClockMHz", "LockedMemoryClockMHz"})
      cols.emplace_back(c);
  }
  void tail_cells(std::vector<Cell>& row) const {
    const SessionInfo& s = r.session();
    row.emplace_back(s.gpu);
    row.emplace_back(s.host);
    row.emplace_back(s.backend);
    row.emplace_back(static_cast<std::int64_t>(s.replay_passes));
    row.emplace_back(s.cache_control);
    row.emplace_back(s.clock_control);
    row.emplace_back(s.mode);
    for (double v : {s.rated_sm_clock_mhz, s.rated_memory_clock_mhz, s.locked_sm_clock_mhz, s.locked_memory_clock_mhz})
      row.push_back(number(v));
  }
};

}  // namespace

Results::Results(SessionInfo session, std::vector<Config> configs, std::vector<SummaryRow> rows,
                 std::vector<SampleRow> samples)
    : session_(std::move(session)), configs_(std::move(configs)), rows_(std::move(rows)),
      samples_(std::move(samples)) {}

const std::vector<std::string>& Results::axis_names() const {
  return configs_.empty() ? kNoAxes : configs_.front().names();
}

const SummaryRow& Results::at(const std::string& annotation, const std::string& metric,
                              std::size_t config_index) const {
  for (const auto& r : rows_)
    if (r.annotation == annotation && r.metric == metric && r.config_index == config_index) return r;
  throw Error("no result for annotation '" + annotation + "', metric '" + metric + "', config " +
              std::to_string(config_index));
}

Table Results::summary_table() const {
  const Layout layout{*this};
  Table t;
  layout.head(t.columns);
  for (const char* c : {"Metric", "Unit", "AvgValue", "StdDev", "MinValue", "MaxValue", "Median", "Q1", "Q3", "IQR",
                        "P20", "P80", "Outliers", "NumRuns", "CI95_Lower", "CI95_Upper", "RelativeStdDevPct", "StableMeasurement", "Normalized",
                        "NormalizationValue", "Geomean", "Kernel"})
    t.columns.emplace_back(c);
  Layout::tail(t.columns);
  for (const char* c : {"ObservedSMClockMHz", "ObservedMemoryClockMHz", "ThrottledRuns", "Converged", "ThermalPauses"})
    t.columns.emplace_back(c);
  for (const auto& r : rows_) {
    std::vector<Cell> row;
    layout.head_cells(row, r.annotation, r.config_index);
    const auto& s = r.stats;
    row.emplace_back(r.metric);
    row.emplace_back(r.unit);
    for (double v : {r.avg_value, s.stddev, s.min, s.max, s.median, s.q1, s.q3, s.iqr, s.p20, s.p80})
      row.push_back(number(v));
    row.emplace_back(static_cast<std::int64_t>(s.outliers));
    row.emplace_back(static_cast<std::int64_t>(s.count));
    for (double v : {s.ci95_lower, s.ci95_upper, s.rsd_pct}) row.push_back(number(v));
    row.push_back(optional_bool(s.stable));
    // As in Nsight Python: false, or the name of the baseline annotation.
    row.push_back(r.normalized.empty() ? Cell{false} : Cell{r.normalized});
    row.push_back(number(r.normalization_value));
    row.push_back(number(r.geomean));
    row.emplace_back(r.kernel);
    layout.tail_cells(row);
    row.push_back(number(r.observed_sm_clock_mhz));
    row.push_back(number(r.observed_memory_clock_mhz));
    row.emplace_back(static_cast<std::int64_t>(r.throttled_runs));
    row.push_back(optional_bool(r.converged));
    row.emplace_back(static_cast<std::int64_t>(r.thermal_pauses));
    t.rows.push_back(std::move(row));
  }
  return t;
}

Table Results::samples_table() const {
  const Layout layout{*this};
  Table t;
  layout.head(t.columns);
  for (const char* c : {"Run", "Metric", "Unit", "Value", "Kernel", "SMClockMHz", "MemoryClockMHz", "Throttled"})
    t.columns.emplace_back(c);
  Layout::tail(t.columns);
  for (const auto& s : samples_) {
    std::vector<Cell> row;
    layout.head_cells(row, s.annotation, s.config_index);
    row.emplace_back(static_cast<std::int64_t>(s.run));
    row.emplace_back(s.metric);
    row.emplace_back(s.unit);
    row.push_back(number(s.value));
    row.emplace_back(s.kernel);
    row.push_back(number(s.sm_clock_mhz));
    row.push_back(number(s.memory_clock_mhz));
    row.emplace_back(s.throttled);
    layout.tail_cells(row);
    t.rows.push_back(std::move(row));
  }
  return t;
}

void Results::write_csv(const std::string& path) const {
  auto out = open_for_writing(path);
  kscope::write_csv(summary_table(), out);
}

void Results::write_samples_csv(const std::string& path) const {
  auto out = open_for_writing(path);
  kscope::write_csv(samples_table(), out);
}

void Results::write_json(const std::string& path) const {
  nlohmann::ordered_json doc;
  const auto nullable = [](double v) { return std::isnan(v) ? nlohmann::ordered_json() : nlohmann::ordered_json(v); };
  doc["session"] = {{"backend", session_.backend},
                    {"replay_passes", session_.replay_passes},
                    {"cache_control", session_.cache_control},
                    {"clock_control", session_.clock_control},
                    {"mode", session_.mode},
                    {"locked_sm_clock_mhz", nullable(session_.locked_sm_clock_mhz)},
                    {"locked_memory_clock_mhz", nullable(session_.locked_memory_clock_mhz)},
                    {"thermal_pauses", session_.thermal_pauses},
                    {"thermal_pause_s", session_.thermal_pause_s},
                    {"gpu", session_.gpu},
                    {"gpu_uuid", session_.gpu_uuid},
                    {"host", session_.host},
                    {"rated_sm_clock_mhz", nullable(session_.rated_sm_clock_mhz)},
                    {"rated_memory_clock_mhz", nullable(session_.rated_memory_clock_mhz)},
                    {"report_path", session_.report_path.empty() ? nlohmann::ordered_json() : nlohmann::ordered_json(session_.report_path)},
                    {"axes", axis_names()}};
  doc["summary"] = detail::table_to_json(summary_table());
  doc["samples"] = detail::table_to_json(samples_table());
  auto out = open_for_writing(path);
  out << doc.dump(1) << "\n";
}

void Results::write_all(const std::string& prefix) const {
  write_csv(prefix + "summary.csv");
  write_samples_csv(prefix + "samples.csv");
  write_json(prefix + "results.json");
}

std::ostream& operator<<(std::ostream& out, const Results& results) {
  const SessionInfo& s = results.session();
  out << "kscope: " << s.gpu << " | backend " << s.backend << " | mode " << s.mode << " (cache_control "
      << s.cache_control << ", clock_control " << s.clock_control << ") | rated SM " << s.rated_sm_clock_mhz
      << " MHz, memory " << s.rated_memory_clock_mhz << " MHz";
  if (!std::isnan(s.locked_sm_clock_mhz)) out << " | locked SM " << s.locked_sm_clock_mhz << " MHz";
  if (s.replay_passes > 1) out << " | " << s.replay_passes << " replay passes per run";
  if (s.thermal_pauses) out << " | " << s.thermal_pauses << " thermal pauses (" << s.thermal_pause_s << " s)";
  if (!s.report_path.empty()) out << " | report " << s.report_path;
  out << "\n";
  // The console view keeps the columns a person reads first; CSV/JSON carry all of them.
  const Table full = results.summary_table();
  std::vector<std::string> shown{"Annotation"};
  for (const auto& a : results.axis_names()) shown.push_back(a);
  for (const char* c : {"Metric", "Unit", "AvgValue", "StdDev", "Median", "IQR", "NumRuns", "CI95_Lower", "CI95_Upper",
                        "RelativeStdDevPct", "StableMeasurement", "ObservedSMClockMHz", "ThrottledRuns", "Kernel"})
    shown.emplace_back(c);
  Table view;
  std::vector<std::size_t> picked;
  for (const auto& c : shown) {
    picked.push_back(full.column(c));
    view.columns.push_back(c == "RelativeStdDevPct" ? "RSD%" : c == "StableMeasurement" ? "Stable"
                           : c == "ObservedSMClockMHz" ? "SMClockMHz" : c == "ThrottledRuns" ? "Throttled" : c);
  }
  for (const auto& row : full.rows) {
    std::vector<Cell> cells;
    for (std::size_t i : picked) cells.push_back(row[i]);
    view.rows.push_back(std::move(cells));
  }
  write_console(view, out);
  return out;
}

Table compare(const Results& candidate, const Results& baseline) {
  const SessionInfo& a = candidate.session();
  const SessionInfo& b = baseline.session();
  const auto refuse = [](const std::string& what, const std::string& x, const std::string& y) {
    throw ConfigError("compare() refuses to compare results taken with different " + what + " ('" + x +
                      "' vs '" + y + "'): their numbers measure different things. Measure both with the same " +
                      what);
  };
  if (a.backend != b.backend) refuse("backends", a.backend, b.backend);
  if (a.cache_control != b.cache_control) refuse("cache_control", a.cache_control, b.cache_control);
  if (a.clock_control != b.clock_control) refuse("clock_control", a.clock_control, b.clock_control);

  std::map<std::tuple<std::string, std::string, std::string>, const SummaryRow*> base;
  for (const auto& r : baseline.rows())
    base[{r.annotation, r.metric, baseline.configs()[r.config_index].to_string()}] = &r;
  Table t;
  t.columns = {"Annotation", "Config", "Metric", "Unit", "Candidate", "Baseline", "Ratio"};
  for (const auto& r : candidate.rows()) {
    const std::string cfg = candidate.configs()[r.config_index].to_string();
    auto it = base.find({r.annotation, r.metric, cfg});
    if (it == base.end()) continue;
    t.rows.push_back({r.annotation, cfg, r.metric, r.unit, number(r.avg_value), number(it->second->avg_value),
                      number(r.avg_value / it->second->avg_value)});
  }
  return t;
}

}  // namespace kscope

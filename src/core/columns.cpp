#include "core/columns.hpp"

#include <cmath>

namespace kscope {
namespace detail {
namespace {

using T = ColumnType;

Cell number(double v) { return std::isnan(v) ? Cell{} : Cell{v}; }
double real(const Cell& c) { return std::holds_alternative<double>(c) ? std::get<double>(c) : NAN; }
Cell count(std::size_t n) { return static_cast<std::int64_t>(n); }
Cell optional_bool(const std::optional<bool>& b) { return b ? Cell{*b} : Cell{}; }
// A declared-work figure of the row; empty without declared work.
template <typename Get>
Cell of_work(const std::optional<Work>& work, Get get) {
  return work ? get(*work) : Cell{};
}

// Session facts, the same on every row of both tables.
template <typename Row>
std::vector<ColumnDefinition<Row>> session_columns() {
  return {
      {{"GPU", T::text}, [](const Row&, const SessionInfo& s) { return Cell{s.gpu}; }},
      {{"Host", T::text}, [](const Row&, const SessionInfo& s) { return Cell{s.host}; }},
      {{"Backend", T::text}, [](const Row&, const SessionInfo& s) { return Cell{to_string(s.backend)}; }},
      {{"ReplayPasses", T::integer}, [](const Row&, const SessionInfo& s) { return count(s.replay_passes); }},
      {{"CacheControl", T::text}, [](const Row&, const SessionInfo& s) { return Cell{to_string(s.cache_control)}; }},
      {{"ClockControl", T::text}, [](const Row&, const SessionInfo& s) { return Cell{to_string(s.clock_control)}; }},
      {{"Mode", T::text}, [](const Row&, const SessionInfo& s) { return Cell{s.mode()}; }},
      {{"RatedSMClockMHz", T::real}, [](const Row&, const SessionInfo& s) { return number(s.rated_sm_clock_mhz); }},
      {{"RatedMemoryClockMHz", T::real},
       [](const Row&, const SessionInfo& s) { return number(s.rated_memory_clock_mhz); }},
      {{"LockedSMClockMHz", T::real}, [](const Row&, const SessionInfo& s) { return number(s.locked_sm_clock_mhz); }},
      {{"LockedMemoryClockMHz", T::real},
       [](const Row&, const SessionInfo& s) { return number(s.locked_memory_clock_mhz); }},
      {{"IdlePowerW", T::real}, [](const Row&, const SessionInfo& s) { return number(s.idle_power_w); }},
  };
}

template <typename Row>
void append(std::vector<ColumnDefinition<Row>>& to, std::vector<ColumnDefinition<Row>> more) {
  for (auto& c : more) to.push_back(std::move(c));
}

std::vector<ColumnDefinition<SummaryRow>> make_summary_columns() {
  using R = SummaryRow;
  using S = SessionInfo;
  std::vector<ColumnDefinition<R>> c{
      {{"Metric", T::text}, [](const R& r, const S&) { return Cell{r.metric}; }},
      {{"Unit", T::text}, [](const R& r, const S&) { return Cell{r.unit}; }},
      {{"AvgValue", T::real}, [](const R& r, const S&) { return number(r.avg_value); }},
      {{"StdDev", T::real}, [](const R& r, const S&) { return number(r.stats.stddev); }},
      {{"MinValue", T::real}, [](const R& r, const S&) { return number(r.stats.min); }},
      {{"MaxValue", T::real}, [](const R& r, const S&) { return number(r.stats.max); }},
      {{"Median", T::real}, [](const R& r, const S&) { return number(r.stats.median); }},
      {{"Q1", T::real}, [](const R& r, const S&) { return number(r.stats.q1); }},
      {{"Q3", T::real}, [](const R& r, const S&) { return number(r.stats.q3); }},
      {{"IQR", T::real}, [](const R& r, const S&) { return number(r.stats.iqr); }},
      {{"P20", T::real}, [](const R& r, const S&) { return number(r.stats.p20); }},
      {{"P80", T::real}, [](const R& r, const S&) { return number(r.stats.p80); }},
      {{"Outliers", T::integer}, [](const R& r, const S&) { return count(r.stats.outliers); }},
      {{"NumRuns", T::integer}, [](const R& r, const S&) { return count(r.stats.count); }},
      {{"CI95_Lower", T::real}, [](const R& r, const S&) { return number(r.stats.ci95_lower); }},
      {{"CI95_Upper", T::real}, [](const R& r, const S&) { return number(r.stats.ci95_upper); }},
      {{"RelativeStdDevPct", T::real}, [](const R& r, const S&) { return number(r.stats.rsd_pct); }},
      {{"StableMeasurement", T::optional_boolean}, [](const R& r, const S&) { return optional_bool(r.stats.stable); }},
      // As in Nsight Python: false, or the name of the baseline annotation.
      {{"Normalized", T::baseline},
       [](const R& r, const S&) { return r.normalized.empty() ? Cell{false} : Cell{r.normalized}; }},
      {{"NormalizationValue", T::real}, [](const R& r, const S&) { return number(r.normalization_value); }},
      {{"Geomean", T::real}, [](const R& r, const S&) { return number(r.geomean); }},
      {{"Kernel", T::text}, [](const R& r, const S&) { return Cell{r.kernel}; }},
  };
  append(c, session_columns<R>());
  append(c, {
                {{"ObservedSMClockMHz", T::real}, [](const R& r, const S&) { return number(r.observed_sm_clock_mhz); }},
                {{"ObservedMemoryClockMHz", T::real},
                 [](const R& r, const S&) { return number(r.observed_memory_clock_mhz); }},
                {{"ThrottledRuns", T::integer}, [](const R& r, const S&) { return count(r.throttled_runs); }},
                {{"Converged", T::optional_boolean}, [](const R& r, const S&) { return optional_bool(r.converged); }},
                {{"ThermalPauses", T::integer}, [](const R& r, const S&) { return count(r.thermal_pauses); }},
            });
  // Settings::work and the roofline (kscope/roofline.hpp): the work on every row of its annotation
  // and config, the rest on its duration row.
  append(c, {
                {{"WorkBytes", T::real},
                 [](const R& r, const S&) { return of_work(r.work, [](const Work& w) { return number(w.bytes); }); }},
                {{"WorkFLOPs", T::real},
                 [](const R& r, const S&) { return of_work(r.work, [](const Work& w) { return number(w.flops); }); }},
                {{"WorkKind", T::text},
                 [](const R& r, const S&) { return of_work(r.work, [](const Work& w) { return Cell{to_string(w.kind)}; }); }},
                {{"ArithmeticIntensity", T::real},
                 [](const R& r, const S&) { return number(r.roofline.arithmetic_intensity); }},
                {{"AchievedGBps", T::real}, [](const R& r, const S&) { return number(r.roofline.achieved_gbps); }},
                {{"DRAMRoofGBps", T::real}, [](const R& r, const S&) { return number(r.roofline.dram_roof_gbps); }},
                {{"DRAMRoofPct", T::real}, [](const R& r, const S&) { return number(r.roofline.dram_pct.mean); }},
                {{"DRAMRoofPct_CI95_Lower", T::real},
                 [](const R& r, const S&) { return number(r.roofline.dram_pct.ci95_lower); }},
                {{"DRAMRoofPct_CI95_Upper", T::real},
                 [](const R& r, const S&) { return number(r.roofline.dram_pct.ci95_upper); }},
                {{"AchievedTFLOPs", T::real}, [](const R& r, const S&) { return number(r.roofline.achieved_tflops); }},
                {{"ComputeRoofTFLOPs", T::real},
                 [](const R& r, const S&) { return number(r.roofline.compute_roof_tflops); }},
                {{"ComputeRoofPct", T::real}, [](const R& r, const S&) { return number(r.roofline.compute_pct.mean); }},
                {{"ComputeRoofPct_CI95_Lower", T::real},
                 [](const R& r, const S&) { return number(r.roofline.compute_pct.ci95_lower); }},
                {{"ComputeRoofPct_CI95_Upper", T::real},
                 [](const R& r, const S&) { return number(r.roofline.compute_pct.ci95_upper); }},
                {{"Bound", T::text},
                 [](const R& r, const S&) { return r.roofline.bound ? Cell{to_string(*r.roofline.bound)} : Cell{}; }},
            });
  return c;
}

std::vector<ColumnDefinition<SampleRow>> make_sample_columns() {
  using R = SampleRow;
  using S = SessionInfo;
  using P = SamplePart;
  std::vector<ColumnDefinition<R>> c{
      {{"Run", T::integer}, [](const R& r, const S&) { return count(r.run); },
       [](R& r, const Cell& c) { r.run = static_cast<std::size_t>(std::get<std::int64_t>(c)); }, P::run},
      {{"Metric", T::text}, [](const R& r, const S&) { return Cell{r.metric}; },
       [](R& r, const Cell& c) { r.metric = std::get<std::string>(c); }, P::label},
      {{"Unit", T::text}, [](const R& r, const S&) { return Cell{r.unit}; },
       [](R& r, const Cell& c) { r.unit = std::get<std::string>(c); }, P::label},
      {{"Value", T::real}, [](const R& r, const S&) { return number(r.value); },
       [](R& r, const Cell& c) { r.value = real(c); }, P::value},
      {{"Kernel", T::text}, [](const R& r, const S&) { return Cell{r.kernel}; },
       [](R& r, const Cell& c) { r.kernel = std::get<std::string>(c); }, P::label},
      {{"SMClockMHz", T::real}, [](const R& r, const S&) { return number(r.sm_clock_mhz); },
       [](R& r, const Cell& c) { r.sm_clock_mhz = real(c); }, P::conditions},
      {{"MemoryClockMHz", T::real}, [](const R& r, const S&) { return number(r.memory_clock_mhz); },
       [](R& r, const Cell& c) { r.memory_clock_mhz = real(c); }, P::conditions},
      {{"Throttled", T::boolean}, [](const R& r, const S&) { return Cell{r.throttled}; },
       [](R& r, const Cell& c) { r.throttled = std::get<bool>(c); }, P::conditions},
  };
  auto session = session_columns<R>();
  for (auto& column : session) column.part = P::session;
  append(c, std::move(session));
  return c;
}

template <typename Row>
std::vector<ColumnSpec> specs_of(const std::vector<ColumnDefinition<Row>>& definitions) {
  std::vector<ColumnSpec> specs;
  for (const auto& d : definitions) specs.push_back(d.spec);
  return specs;
}

}  // namespace

Cell to_cell(const Value& v) {
  switch (v.type()) {
    case ValueType::integer: return v.as_int();
    case ValueType::real: return v.as_double();
    case ValueType::text: return v.as_string();
    case ValueType::boolean: return v.as_bool();
  }
  return {};
}

const std::vector<ColumnDefinition<SummaryRow>>& summary_column_definitions() {
  static const auto columns = make_summary_columns();
  return columns;
}

const std::vector<ColumnDefinition<SampleRow>>& sample_column_definitions() {
  static const auto columns = make_sample_columns();
  return columns;
}

}  // namespace detail

std::string to_string(ColumnType type) {
  switch (type) {
    case ColumnType::text: return "text";
    case ColumnType::integer: return "integer";
    case ColumnType::real: return "real";
    case ColumnType::boolean: return "boolean";
    case ColumnType::optional_boolean: return "optional_boolean";
    case ColumnType::baseline: return "baseline";
  }
  return "?";
}

const std::vector<ColumnSpec>& summary_columns() {
  static const auto specs = detail::specs_of(detail::summary_column_definitions());
  return specs;
}

const std::vector<ColumnSpec>& sample_columns() {
  static const auto specs = detail::specs_of(detail::sample_column_definitions());
  return specs;
}

const std::vector<std::pair<std::string, std::string>>& console_columns() {
  static const std::vector<std::pair<std::string, std::string>> columns{
      {"Metric", "Metric"},
      {"Unit", "Unit"},
      {"AvgValue", "AvgValue"},
      {"StdDev", "StdDev"},
      {"Median", "Median"},
      {"IQR", "IQR"},
      {"NumRuns", "NumRuns"},
      {"CI95_Lower", "CI95_Lower"},
      {"CI95_Upper", "CI95_Upper"},
      {"RelativeStdDevPct", "RSD%"},
      {"StableMeasurement", "Stable"},
      {"ObservedSMClockMHz", "SMClockMHz"},
      {"ThrottledRuns", "Throttled"},
      {"Kernel", "Kernel"},
  };
  return columns;
}

const std::vector<std::pair<std::string, std::string>>& roofline_console_columns() {
  static const std::vector<std::pair<std::string, std::string>> columns{
      {"DRAMRoofPct", "DRAM%"},
      {"ComputeRoofPct", "Compute%"},
      {"Bound", "Bound"},
  };
  return columns;
}

}  // namespace kscope

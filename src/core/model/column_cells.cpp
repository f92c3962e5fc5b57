#include "core/model/column_cells.hpp"

#include "core/model/cell_values.hpp"
#include "kscope/detail/enum_names.hpp"

#include <algorithm>
#include <cmath>

namespace kscope {
namespace detail {
namespace {

using T = ColumnType;
using S = SessionInfo;
using P = SamplePart;

// A real of the engine's tables: empty where undefined.
Cell number(double v) { return std::isnan(v) ? Cell{} : Cell{v}; }

// A column of one member of the row: `access` is a generic lambda returning a reference to it.
template <typename Row, typename Access>
ColumnDefinition<Row> real_column(std::string name, Access access, SamplePart part = P::row) {
  return {{std::move(name), T::real}, [access](const Row& r, const S&) { return number(access(r)); },
          [access](Row& r, const Cell& c) { return read_cell(c, access(r)); }, part};
}
template <typename Row, typename Access>
ColumnDefinition<Row> count_column(std::string name, Access access, SamplePart part = P::row) {
  return {{std::move(name), T::integer}, [access](const Row& r, const S&) { return count_cell(access(r)); },
          [access](Row& r, const Cell& c) { return read_cell(c, access(r)); }, part};
}
template <typename Row, typename Access>
ColumnDefinition<Row> text_column(std::string name, Access access, SamplePart part = P::row) {
  return {{std::move(name), T::text}, [access](const Row& r, const S&) { return Cell{access(r)}; },
          [access](Row& r, const Cell& c) { return read_cell(c, access(r)); }, part};
}
template <typename Row, typename Access>
ColumnDefinition<Row> optional_bool_column(std::string name, Access access) {
  return {{std::move(name), T::optional_boolean}, [access](const Row& r, const S&) { return value_cell(access(r)); },
          [access](Row& r, const Cell& c) { return read_cell(c, access(r)); }};
}

// A declared-work figure of the row: empty without declared work; the first one read creates it.
template <typename Get>
Cell of_work(const std::optional<Work>& work, Get get) {
  return work ? get(*work) : Cell{};
}
ColumnDefinition<SummaryRow> work_column(std::string name, double Work::*member) {
  return {{std::move(name), T::real},
          [member](const SummaryRow& r, const S&) { return of_work(r.work, [member](const Work& w) { return number(w.*member); }); },
          [member](SummaryRow& r, const Cell& c) {
            if (std::holds_alternative<std::monostate>(c)) return true;
            if (!r.work) r.work.emplace();
            return read_cell(c, (*r.work).*member);
          }};
}

// Session facts, the same on every row of both tables: not read back (a results file keeps the
// session once; a resumed sweep checks it once).
template <typename Row>
std::vector<ColumnDefinition<Row>> session_columns() {
  const auto fact = [](std::string name, ColumnType type, std::function<Cell(const S&)> cell) {
    return ColumnDefinition<Row>{{std::move(name), type}, [cell](const Row&, const S& s) { return cell(s); }, {}, P::session};
  };
  return {
      fact("GPU", T::text, [](const S& s) { return Cell{s.gpu}; }),
      fact("Host", T::text, [](const S& s) { return Cell{s.host}; }),
      fact("Backend", T::text, [](const S& s) { return Cell{to_string(s.backend)}; }),
      fact("ReplayPasses", T::integer, [](const S& s) { return count_cell(s.replay_passes); }),
      fact("CacheControl", T::text, [](const S& s) { return Cell{to_string(s.cache_control)}; }),
      fact("ClockControl", T::text, [](const S& s) { return Cell{to_string(s.clock_control)}; }),
      fact("Mode", T::text, [](const S& s) { return Cell{s.mode()}; }),
      fact("RatedSMClockMHz", T::real, [](const S& s) { return number(s.rated_sm_clock_mhz); }),
      fact("RatedMemoryClockMHz", T::real, [](const S& s) { return number(s.rated_memory_clock_mhz); }),
      fact("LockedSMClockMHz", T::real, [](const S& s) { return number(s.locked_sm_clock_mhz); }),
      fact("LockedMemoryClockMHz", T::real, [](const S& s) { return number(s.locked_memory_clock_mhz); }),
      fact("IdlePowerW", T::real, [](const S& s) { return number(s.idle_power_w); }),
  };
}

// One column per statistic of the table (kscope/summary_statistics.hpp), in its order: a field of
// SampleStatistics, or a registered statistic's value in `added` (empty in a row read from a file
// written without it).
std::vector<ColumnDefinition<SummaryRow>> statistic_columns() {
  std::vector<ColumnDefinition<SummaryRow>> columns;
  const auto& statistics = summary_statistics();
  const auto count = static_cast<std::size_t>(
      std::count_if(statistics.begin(), statistics.end(), [](const SummaryStatistic& s) { return !s.field; }));
  std::size_t added = 0;
  for (const SummaryStatistic& statistic : statistics) {
    if (statistic.field) {
      columns.push_back(real_column<SummaryRow>(statistic.name, [field = statistic.field](auto& r) -> auto& { return r.stats.*field; }));
      continue;
    }
    const std::size_t at = added++;
    columns.push_back({{statistic.name, T::real},
                       [at](const SummaryRow& r, const S&) { return at < r.stats.added.size() ? number(r.stats.added[at]) : Cell{}; },
                       [at, count](SummaryRow& r, const Cell& c) {
                         r.stats.added.resize(std::max(r.stats.added.size(), count), NAN);
                         return read_cell(c, r.stats.added[at]);
                       }});
  }
  return columns;
}

template <typename Row>
void append(std::vector<ColumnDefinition<Row>>& to, std::vector<ColumnDefinition<Row>> more) {
  for (auto& c : more) to.push_back(std::move(c));
}

std::vector<ColumnDefinition<SummaryRow>> make_summary_columns() {
  using R = SummaryRow;
  std::vector<ColumnDefinition<R>> c{
      text_column<R>("Metric", [](auto& r) -> auto& { return r.metric; }),
      text_column<R>("Unit", [](auto& r) -> auto& { return r.unit; }),
      real_column<R>("AvgValue", [](auto& r) -> auto& { return r.avg_value; }),
      real_column<R>("StdDev", [](auto& r) -> auto& { return r.stats.stddev; }),
  };
  append(c, statistic_columns());
  append(c, {
      count_column<R>("Outliers", [](auto& r) -> auto& { return r.stats.outliers; }),
      count_column<R>("NumRuns", [](auto& r) -> auto& { return r.stats.count; }),
      real_column<R>("CI95_Lower", [](auto& r) -> auto& { return r.stats.ci95_lower; }),
      real_column<R>("CI95_Upper", [](auto& r) -> auto& { return r.stats.ci95_upper; }),
      real_column<R>("RelativeStdDevPct", [](auto& r) -> auto& { return r.stats.rsd_pct; }),
      optional_bool_column<R>("StableMeasurement", [](auto& r) -> auto& { return r.stats.stable; }),
      // As in Nsight Python: false, or the name of the baseline annotation.
      {{"Normalized", T::baseline}, [](const R& r, const S&) { return r.normalized.empty() ? Cell{false} : Cell{r.normalized}; },
       [](R& r, const Cell& c) {
         if (c == Cell{false}) r.normalized.clear();
         else if (const auto* name = std::get_if<std::string>(&c); name && !name->empty()) r.normalized = *name;
         else return false;
         return true;
       }},
      real_column<R>("NormalizationValue", [](auto& r) -> auto& { return r.normalization_value; }),
      real_column<R>("Geomean", [](auto& r) -> auto& { return r.geomean; }),
      text_column<R>("Kernel", [](auto& r) -> auto& { return r.kernel; }),
  });
  append(c, session_columns<R>());
  append(c, {
                real_column<R>("ObservedSMClockMHz", [](auto& r) -> auto& { return r.observed_sm_clock_mhz; }),
                real_column<R>("ObservedMemoryClockMHz", [](auto& r) -> auto& { return r.observed_memory_clock_mhz; }),
                count_column<R>("ThrottledRuns", [](auto& r) -> auto& { return r.throttled_runs; }),
                optional_bool_column<R>("Converged", [](auto& r) -> auto& { return r.converged; }),
                count_column<R>("ThermalPauses", [](auto& r) -> auto& { return r.thermal_pauses; }),
                count_column<R>("OtherProcessRuns", [](auto& r) -> auto& { return r.other_process_runs; }),
                count_column<R>("OverlappedRuns", [](auto& r) -> auto& { return r.overlapped_runs; }),
                count_column<R>("HostGapRuns", [](auto& r) -> auto& { return r.host_gap_runs; }),
            });
  // Settings::work and the roofline (kscope/roofline.hpp): the work on every row of its annotation
  // and config, the rest on its duration row.
  append(c, {
                work_column("WorkBytes", &Work::bytes),
                work_column("WorkFLOPs", &Work::flops),
                {{"WorkKind", T::text},
                 [](const R& r, const S&) { return of_work(r.work, [](const Work& w) { return Cell{to_string(w.kind)}; }); },
                 [](R& r, const Cell& c) {
                   if (std::holds_alternative<std::monostate>(c)) return true;
                   const auto* text = std::get_if<std::string>(&c);
                   const auto kind = text ? parse_flop_kind(*text) : std::nullopt;
                   if (!kind) return false;
                   if (!r.work) r.work.emplace();
                   r.work->kind = *kind;
                   return true;
                 },
                 P::row, "null or a kind such as \"fp32\" or \"fp16 tensor\""},
                real_column<R>("ArithmeticIntensity", [](auto& r) -> auto& { return r.roofline.arithmetic_intensity; }),
                real_column<R>("AchievedGBps", [](auto& r) -> auto& { return r.roofline.achieved_gbps; }),
                real_column<R>("DRAMRoofGBps", [](auto& r) -> auto& { return r.roofline.dram_roof_gbps; }),
                real_column<R>("DRAMRoofPct", [](auto& r) -> auto& { return r.roofline.dram_pct.mean; }),
                real_column<R>("DRAMRoofPct_CI95_Lower", [](auto& r) -> auto& { return r.roofline.dram_pct.ci95_lower; }),
                real_column<R>("DRAMRoofPct_CI95_Upper", [](auto& r) -> auto& { return r.roofline.dram_pct.ci95_upper; }),
                real_column<R>("AchievedTFLOPs", [](auto& r) -> auto& { return r.roofline.achieved_tflops; }),
                real_column<R>("ComputeRoofTFLOPs", [](auto& r) -> auto& { return r.roofline.compute_roof_tflops; }),
                real_column<R>("ComputeRoofPct", [](auto& r) -> auto& { return r.roofline.compute_pct.mean; }),
                real_column<R>("ComputeRoofPct_CI95_Lower", [](auto& r) -> auto& { return r.roofline.compute_pct.ci95_lower; }),
                real_column<R>("ComputeRoofPct_CI95_Upper", [](auto& r) -> auto& { return r.roofline.compute_pct.ci95_upper; }),
                {{"Bound", T::text},
                 [](const R& r, const S&) { return r.roofline.bound ? Cell{to_string(*r.roofline.bound)} : Cell{}; },
                 [](R& r, const Cell& c) {
                   r.roofline.bound.reset();
                   for (Bound b : {Bound::memory, Bound::compute, Bound::latency})
                     if (c == Cell{to_string(b)}) r.roofline.bound = b;
                   return r.roofline.bound || std::holds_alternative<std::monostate>(c);
                 },
                 P::row, "null, \"memory\", \"compute\" or \"latency\""},
            });
  return c;
}

std::vector<ColumnDefinition<SampleRow>> make_sample_columns() {
  using R = SampleRow;
  std::vector<ColumnDefinition<R>> c{
      count_column<R>("Run", [](auto& r) -> auto& { return r.run; }, P::run),
      text_column<R>("Metric", [](auto& r) -> auto& { return r.metric; }, P::label),
      text_column<R>("Unit", [](auto& r) -> auto& { return r.unit; }, P::label),
      real_column<R>("Value", [](auto& r) -> auto& { return r.value; }, P::value),
      text_column<R>("Kernel", [](auto& r) -> auto& { return r.kernel; }, P::label),
      real_column<R>("SMClockMHz", [](auto& r) -> auto& { return r.sm_clock_mhz; }, P::conditions),
      real_column<R>("MemoryClockMHz", [](auto& r) -> auto& { return r.memory_clock_mhz; }, P::conditions),
      {{"Throttled", T::boolean}, [](const R& r, const S&) { return Cell{r.throttled}; },
       [](R& r, const Cell& c) { return read_cell(c, r.throttled); }, P::conditions},
      {{"OtherProcess", T::boolean}, [](const R& r, const S&) { return Cell{r.other_process}; },
       [](R& r, const Cell& c) { return read_cell(c, r.other_process); }, P::conditions},
      real_column<R>("OverlapNs", [](auto& r) -> auto& { return r.overlap_ns; }, P::conditions),
      real_column<R>("HostGapNs", [](auto& r) -> auto& { return r.host_gap_ns; }, P::conditions),
  };
  append(c, session_columns<R>());
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
  return remade_with_statistics([] { return make_summary_columns(); });
}

const std::vector<ColumnDefinition<SampleRow>>& sample_column_definitions() {
  static const auto columns = make_sample_columns();
  return columns;
}

}  // namespace detail

std::string to_string(ColumnType type) { return detail::enum_name(type); }

const std::vector<ColumnSpec>& summary_columns() {
  return detail::remade_with_statistics([] { return detail::specs_of(detail::summary_column_definitions()); });
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

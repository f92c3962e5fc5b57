#include "kscope/compare.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <iterator>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <tuple>

#include "core/model/caller_language.hpp"
#include "core/model/column_cells.hpp"
#include "core/files/output_formats.hpp"
#include "core/model/derived_columns.hpp"
#include "core/statistics/significance.hpp"
#include "core/model/suggest.hpp"
#include "kscope/backend_registry.hpp"
#include "kscope/detail/enum_names.hpp"
#include "kscope/errors.hpp"
#include "kscope/evaluate.hpp"
#include "kscope/statistics.hpp"

namespace kscope {
namespace {

using detail::formatted;

constexpr double nan = std::numeric_limits<double>::quiet_NaN();

// Today's refusal, in today's words.
[[noreturn]] void refuse(const std::string& what, const std::string& baseline, const std::string& candidate) {
  throw ConfigError("compare() refuses to compare results taken with different " + what + " ('" + baseline +
                    "' vs '" + candidate + "'): their numbers measure different things. Measure both with the same " +
                    what);
}

std::set<std::string> annotations_of(const Results& r) {
  std::set<std::string> names;
  for (const SummaryRow& row : r.rows()) names.insert(row.annotation);
  return names;
}

// Whether the rows are an evaluation's measurements: its two sides, each call timed as one range.
bool holds_evaluation(const Results& r) {
  return annotations_of(r) == std::set<std::string>{to_string(Side::candidate), to_string(Side::reference)} &&
         r.settings().replay_mode == ReplayMode::range;
}

// An evaluation's measurements against a profile's share no row: said as what it is, before the
// settings an evaluation fixes (replay_mode) would be blamed.
void check_same_kind(const Results& baseline, const Results& candidate) {
  const bool evaluation = holds_evaluation(baseline);
  if (evaluation == holds_evaluation(candidate)) return;
  std::vector<std::string> shared;
  const auto b = annotations_of(baseline), c = annotations_of(candidate);
  std::set_intersection(b.begin(), b.end(), c.begin(), c.end(), std::back_inserter(shared));
  if (!shared.empty()) return;
  const Results& profile = evaluation ? candidate : baseline;
  const auto names = annotations_of(profile);
  throw ConfigError(std::string("compare() cannot match an evaluation with a profile: the ") +
                    (evaluation ? "baseline" : "candidate") + " holds an evaluation's measurements (its candidate " +
                    "and reference calls, each timed as one range), the " + (evaluation ? "candidate" : "baseline") +
                    " a profile's (annotations " + detail::quoted_list(std::vector<std::string>(names.begin(), names.end())) +
                    "), so no row is measured on both sides. Compare an evaluation with another evaluation (" +
                    detail::spell("Evaluation::measurements()", "an EvaluationResults or its saved file") +
                    " on both sides), and a profile with a profile");
}

void check_comparable(const Results& baseline, const Results& candidate) {
  check_same_kind(baseline, candidate);
  const SessionInfo& b = baseline.session();
  const SessionInfo& c = candidate.session();
  if (b.backend != c.backend) refuse("backends", to_string(b.backend), to_string(c.backend));
  if (b.cache_control != c.cache_control)
    refuse("cache_control", to_string(b.cache_control), to_string(c.cache_control));
  if (b.clock_control != c.clock_control)
    refuse("clock_control", to_string(b.clock_control), to_string(c.clock_control));
  // Range replay measures a region with the gaps between its kernels; kernel replay each kernel.
  if (definition(b.backend).capabilities.replay_modes &&
      baseline.settings().replay_mode != candidate.settings().replay_mode)
    refuse("replay_mode", to_string(baseline.settings().replay_mode), to_string(candidate.settings().replay_mode));
  const auto& b_axes = baseline.axis_names();
  const auto& c_axes = candidate.axis_names();
  if (std::set(b_axes.begin(), b_axes.end()) != std::set(c_axes.begin(), c_axes.end()))
    throw ConfigError("compare() cannot match the configs of results with different config axes (baseline: " +
                      detail::quoted_list(b_axes) + "; candidate: " + detail::quoted_list(c_axes) +
                      "): compare results of the same sweep; configs measured on one side only are listed as such");
}

// An exact text form of a config's values in the given axis order (doubles by their bits), to
// match the configs of both sides.
std::string config_key(const Config& config, const std::vector<std::string>& axes) {
  std::string key;
  for (const auto& name : axes) {
    const Value& v = config.at(name);
    key += static_cast<char>('0' + static_cast<int>(v.type()));
    switch (v.type()) {
      case ValueType::integer: key += std::to_string(v.as_int()); break;
      case ValueType::real: {
        const double d = v.as_double();
        std::uint64_t bits = 0;
        std::memcpy(&bits, &d, sizeof bits);
        key += std::to_string(bits);
        break;
      }
      case ValueType::text: key += std::to_string(v.as_string().size()) + ":" + v.as_string(); break;
      case ValueType::boolean: key += v.as_bool() ? "1" : "0"; break;
    }
    key += '\x1f';
  }
  return key;
}

using RowKey = std::tuple<std::string, std::size_t, std::string>;  // annotation, config, metric

// A row's samples as they entered its statistics, with the SM clock observed around each one's run.
struct RowSamples {
  std::vector<double> values, sm_clocks_mhz;
};

std::map<RowKey, RowSamples> samples_by_row(const Results& r) {
  const bool exclude_throttled = r.settings().throttled_runs == ThrottledRuns::exclude;
  std::map<RowKey, RowSamples> out;
  for (const SampleRow& s : r.samples()) {
    if (exclude_throttled && s.throttled) continue;
    RowSamples& row = out[{s.annotation, s.config_index, s.metric}];
    row.values.push_back(s.value);
    row.sm_clocks_mhz.push_back(s.sm_clock_mhz);
  }
  return out;
}

ComparedSide side_of(const SummaryRow& row, const std::vector<double>& samples) {
  const SampleStatistics s = summarize(samples, std::numeric_limits<double>::infinity());
  return {row.config_index, s.count, samples.size(), s.median, s.mean, s.rsd_pct, row.observed_sm_clock_mhz};
}

std::string ci_method(const CompareOptions& o) {
  return "percentile bootstrap, " + formatted("%g", 100 * o.confidence) + "%, " + std::to_string(o.resamples) +
         " resamples, seed " + std::to_string(o.seed);
}

void check_directions(const CompareOptions& options, const Results& baseline, const Results& candidate) {
  std::vector<std::string> metrics;
  for (const Results* r : {&baseline, &candidate})
    for (const SummaryRow& row : r->rows())
      if (std::find(metrics.begin(), metrics.end(), row.metric) == metrics.end()) metrics.push_back(row.metric);
  for (const auto& [metric, direction] : options.directions) {
    if (std::find(metrics.begin(), metrics.end(), metric) == metrics.end())
      throw ConfigError(detail::compare_option("directions") + " names metric '" + metric +
                        "', which neither result holds; closest metrics: " +
                        detail::quoted_list(detail::closest_names(metric, metrics)));
  }
}

// The session-wide differences, as warnings, and the flags they put on every row.
std::vector<std::string> session_flags(const SessionInfo& b, const SessionInfo& c, std::vector<std::string>& warnings) {
  std::vector<std::string> flags;
  if (!b.gpu.empty() && !c.gpu.empty() && b.gpu != c.gpu) {
    flags.push_back("gpu");
    warnings.push_back("the GPUs differ (baseline " + b.gpu + ", candidate " + c.gpu +
                       "): a verdict may reflect the hardware, not the code (rows flagged gpu)");
  }
  if (!b.driver_version.empty() && !c.driver_version.empty() && b.driver_version != c.driver_version) {
    flags.push_back("driver");
    warnings.push_back("the NVIDIA drivers differ (baseline " + b.driver_version + ", candidate " + c.driver_version +
                       "): a driver can change kernel timings (rows flagged driver)");
  }
  return flags;
}

// Flags rows whose observed SM clocks differ by more than the threshold, and says so once.
void flag_clocks(std::vector<ComparisonRow>& rows, const CompareOptions& options, std::vector<std::string>& warnings) {
  std::size_t flagged = 0;
  const ComparisonRow* largest = nullptr;
  double largest_change = 0;
  for (ComparisonRow& row : rows) {
    const double change = std::abs(row.candidate.observed_sm_clock_mhz / row.baseline.observed_sm_clock_mhz - 1);
    if (!(100 * change > options.threshold_pct)) continue;  // also false for NaN (clocks unknown)
    row.flags.push_back("sm_clock");
    ++flagged;
    if (change > largest_change) largest_change = change, largest = &row;
  }
  if (!flagged) return;
  warnings.push_back(
      "observed SM clocks differ by more than the threshold (" + formatted("%g", options.threshold_pct) + "%) in " +
      std::to_string(flagged) + " of " + std::to_string(rows.size()) + " rows (largest: " +
      formatted("%.0f", largest->baseline.observed_sm_clock_mhz) + " vs " +
      formatted("%.0f", largest->candidate.observed_sm_clock_mhz) + " MHz, " + largest->annotation + " " +
      largest->metric + "): a compute-bound kernel's duration scales with 1/clock, so the clocks alone can "
      "explain a verdict; lock them on both sides (" + detail::spell("ClockControl::base", "clock_control='base'") +
      ") (rows flagged sm_clock)");
}

MetricDirection direction_of(const SummaryRow& row, const CompareOptions& options) {
  const auto overridden = options.directions.find(row.metric);
  return overridden != options.directions.end() ? overridden->second
                                                : detail::infer_metric_direction(row.metric, row.unit);
}

// What names a row (annotation, config values in the baseline's axis order, metric, unit) and its direction.
ComparisonRow row_for(const SummaryRow& row, const Config& config, const std::vector<std::string>& axes,
                      const CompareOptions& options) {
  ComparisonRow out;
  out.annotation = row.annotation;
  for (const auto& name : axes) out.config.push_back(config.at(name));
  out.metric = row.metric;
  out.unit = row.unit;
  out.direction = direction_of(row, options);
  return out;
}

ComparisonRow only_on_one_side(const SummaryRow& row, const Config& config, const std::vector<std::string>& axes,
                               const RowSamples& samples, bool in_baseline, const CompareOptions& options) {
  ComparisonRow out = row_for(row, config, axes, options);
  (in_baseline ? out.baseline : out.candidate) = side_of(row, samples.values);
  out.u_test_method = to_string(detail::UTestMethod::not_tested);
  out.verdict = in_baseline ? Verdict::only_in_baseline : Verdict::only_in_candidate;
  out.reason = in_baseline ? "measured in the baseline only" : "measured in the candidate only";
  return out;
}

// The candidate's rows by the baseline's config of the same values; a config measured by the
// candidate alone has none of them.
std::map<RowKey, const SummaryRow*> candidate_rows_by_baseline_config(const Results& baseline, const Results& candidate,
                                                                      const std::vector<std::string>& axes) {
  std::map<std::string, std::size_t> baseline_configs;
  for (const Config& c : baseline.configs()) baseline_configs.emplace(config_key(c, axes), c.index());
  std::vector<std::optional<std::size_t>> as_baseline_config;
  for (const Config& c : candidate.configs()) {
    const auto found = baseline_configs.find(config_key(c, axes));
    as_baseline_config.push_back(found == baseline_configs.end() ? std::nullopt
                                                                 : std::optional<std::size_t>(found->second));
  }
  std::map<RowKey, const SummaryRow*> rows;
  for (const SummaryRow& r : candidate.rows())
    if (const auto b = as_baseline_config[r.config_index]) rows[{r.annotation, *b, r.metric}] = &r;
  return rows;
}

const RowSamples& samples_of(const std::map<RowKey, RowSamples>& by_row, const SummaryRow& r) {
  static const RowSamples none;
  const auto found = by_row.find(RowKey{r.annotation, r.config_index, r.metric});
  return found == by_row.end() ? none : found->second;
}

// A row measured on both sides: both sides' statistics, and the verdict of their samples (none for
// values in different units); a duration's change is confirmed in cycles where its clocks varied.
void judge(ComparisonRow& row, const SummaryRow& b, const RowSamples& base, const SummaryRow& c,
           const RowSamples& cand, const CompareOptions& options) {
  row.baseline = side_of(b, base.values);
  row.candidate = side_of(c, cand.values);
  if (b.unit != c.unit) {
    row.u_test_method = to_string(detail::UTestMethod::not_tested);
    row.verdict = Verdict::unstable;
    row.reason = "units differ (baseline '" + b.unit + "', candidate '" + c.unit + "'): the values cannot be compared";
    return;
  }
  const detail::SampleClocks clocks{base.sm_clocks_mhz, cand.sm_clocks_mhz};
  const detail::SampleComparison s = detail::compare_samples(base.values, cand.values, row.direction, options,
                                                             detail::is_time_unit(b.unit) ? &clocks : nullptr);
  row.ratio = s.ratio;
  row.ci_lower = s.ratio_ci.lower;
  row.ci_upper = s.ratio_ci.upper;
  row.u = s.u_test.u;
  row.p_value = s.u_test.p_value;
  row.u_test_method = to_string(s.u_test.method);
  if (s.cycles) {
    row.cycles_ratio = s.cycles->ratio;
    row.cycles_ci_lower = s.cycles->ratio_ci.lower;
    row.cycles_ci_upper = s.cycles->ratio_ci.upper;
    row.cycles_p_value = s.cycles->u_test.p_value;
  }
  row.verdict = s.verdict;
  row.reason = s.reason;
}

// "1 row", "3 rows"
std::string rows_text(std::size_t n) { return std::to_string(n) + (n == 1 ? " row" : " rows"); }

// The rows too_few_samples, by why: too few runs measured, NaN values among enough runs, or too few
// for the U test whatever min_samples allows; each with its fix.
std::string why_too_few(const Comparison& out) {
  const CompareOptions& o = out.options;
  std::size_t few_runs = 0, nan_values = 0, powerless = 0;
  for (const ComparisonRow& r : out.rows) {
    if (r.verdict != Verdict::too_few_samples) continue;
    if (std::min(r.baseline.measured, r.candidate.measured) < o.min_samples) ++few_runs;
    else if (std::min(r.baseline.count, r.candidate.count) < o.min_samples) ++nan_values;
    else ++powerless;
  }
  const std::size_t needed = std::max(o.min_samples, detail::values_for_significance(o.alpha));
  std::vector<std::string> parts;
  if (few_runs)
    parts.push_back(rows_text(few_runs) + " with fewer than " + detail::compare_option("min_samples") + " (" +
                    std::to_string(o.min_samples) + ") runs on a side (results of " + detail::option("runs") +
                    " = 1 have one): measure both sides with at least " + std::to_string(needed) + " runs");
  if (nan_values)
    parts.push_back(rows_text(nan_values) + " with NaN values on a side (runs that failed or recorded nothing) " +
                    "leaving fewer than " + std::to_string(o.min_samples) + " valid values: more runs will " +
                    "not help; find why in those rows' samples");
  if (powerless)
    parts.push_back(rows_text(powerless) + " with too few values for the U test to reach p < " +
                    detail::compare_option("alpha") + " (" + detail::formatted("%g", o.alpha) + ") at all: measure " +
                    "both sides at least " + std::to_string(needed) + " times");
  std::string text;
  for (const auto& part : parts) text += (text.empty() ? "" : "; ") + part;
  return text;
}

void warn_of_rows_not_judged(Comparison& out) {
  if (const std::size_t n = out.count(Verdict::too_few_samples))
    out.warnings.push_back(rows_text(n) + " cannot be judged (verdict too_few_samples): " +
                           why_too_few(out));
  if (const std::size_t n = out.count(Verdict::ambiguous))
    out.warnings.push_back(std::to_string(n) + (n == 1 ? " row changed" : " rows changed") + " in time but not in " +
                           "cycles (verdict ambiguous): the SM clocks of their runs differ and can explain the change; " +
                           "lock the clocks on both sides (" + detail::spell("ClockControl::base", "clock_control='base'") +
                           ")");
}

void warn_of_one_sided_rows(Comparison& out) {
  const std::size_t only_base = out.count(Verdict::only_in_baseline);
  const std::size_t only_cand = out.count(Verdict::only_in_candidate);
  if (only_base || only_cand)
    out.warnings.push_back(std::to_string(only_base) + " rows measured only in the baseline and " +
                           std::to_string(only_cand) + " only in the candidate (verdicts only_in_baseline, "
                           "only_in_candidate): an annotation, config or metric was added or removed");
}

Cell number(double v) { return std::isnan(v) ? Cell{} : Cell{v}; }
Cell integer(std::size_t n) { return static_cast<std::int64_t>(n); }

}  // namespace

std::string to_string(Gate g) { return detail::enum_name(g); }

Comparison compare(const Results& baseline, const Results& candidate, const CompareOptions& options) {
  options.validate();  // once: the rows' comparisons trust them
  check_comparable(baseline, candidate);
  check_directions(options, baseline, candidate);

  Comparison out;
  out.options = options;
  out.axis_names = baseline.axis_names();
  const std::vector<std::string>& axes = out.axis_names;
  const std::map<RowKey, const SummaryRow*> candidate_rows = candidate_rows_by_baseline_config(baseline, candidate, axes);
  const auto base_samples = samples_by_row(baseline);
  const auto cand_samples = samples_by_row(candidate);
  const std::vector<std::string> session_wide = session_flags(baseline.session(), candidate.session(), out.warnings);

  std::set<const SummaryRow*> matched;
  for (const SummaryRow& b : baseline.rows()) {
    const Config& config = baseline.configs()[b.config_index];
    const auto found = candidate_rows.find({b.annotation, b.config_index, b.metric});
    if (found == candidate_rows.end()) {
      out.rows.push_back(only_on_one_side(b, config, axes, samples_of(base_samples, b), true, options));
      continue;
    }
    const SummaryRow& c = *found->second;
    matched.insert(&c);
    ComparisonRow row = row_for(b, config, axes, options);
    row.flags = session_wide;
    judge(row, b, samples_of(base_samples, b), c, samples_of(cand_samples, c), options);
    out.rows.push_back(std::move(row));
  }
  flag_clocks(out.rows, options, out.warnings);
  for (const SummaryRow& c : candidate.rows()) {
    if (matched.count(&c)) continue;
    out.rows.push_back(only_on_one_side(c, candidate.configs()[c.config_index], axes, samples_of(cand_samples, c), false, options));
  }
  warn_of_rows_not_judged(out);
  warn_of_one_sided_rows(out);
  return out;
}

std::size_t Comparison::count(Verdict verdict) const {
  return static_cast<std::size_t>(
      std::count_if(rows.begin(), rows.end(), [verdict](const ComparisonRow& r) { return r.verdict == verdict; }));
}

Gate Comparison::gate() const {
  if (count(Verdict::slower)) return Gate::slower;
  return count(Verdict::too_few_samples) ? Gate::cannot_judge : Gate::passed;
}

namespace {

using Columns = detail::DerivedColumns<Comparison, ComparisonRow>;
using R = ComparisonRow;
using C = Comparison;
using T = ColumnType;

// A real of one row, by the member that holds it.
template <auto member>
detail::DerivedColumn<C, R> real(const char* name) {
  return {name, T::real, [](const C&, const R& r) { return number(r.*member); }};
}
template <auto side, auto member>
detail::DerivedColumn<C, R> side_real(const char* name) {
  return {name, T::real, [](const C&, const R& r) { return number(r.*side.*member); }};
}

const Columns& comparison_table() {
  static const Columns table{
      {
          {"Annotation", T::text, [](const C&, const R& r) { return Cell{r.annotation}; }},
          {"Metric", T::text, [](const C&, const R& r) { return Cell{r.metric}; }},
          {"Unit", T::text, [](const C&, const R& r) { return Cell{r.unit}; }},
          {"Direction", T::text, [](const C&, const R& r) { return Cell{to_string(r.direction)}; }},
          side_real<&R::baseline, &ComparedSide::median>("BaselineMedian"),
          side_real<&R::candidate, &ComparedSide::median>("CandidateMedian"),
          side_real<&R::baseline, &ComparedSide::mean>("BaselineMean"),
          side_real<&R::candidate, &ComparedSide::mean>("CandidateMean"),
          {"BaselineRuns", T::integer, [](const C&, const R& r) { return integer(r.baseline.count); }},
          {"CandidateRuns", T::integer, [](const C&, const R& r) { return integer(r.candidate.count); }},
          side_real<&R::baseline, &ComparedSide::rsd_pct>("BaselineRSDPct"),
          side_real<&R::candidate, &ComparedSide::rsd_pct>("CandidateRSDPct"),
          real<&R::ratio>("Ratio"),
          real<&R::ci_lower>("CI_Lower"),
          real<&R::ci_upper>("CI_Upper"),
          {"CI_Method", T::text,
           [](const C& c, const R& r) {  // computed where both sides are present, of the same unit
             return std::isnan(r.ci_lower) ? Cell{} : Cell{ci_method(c.options)};
           }},
          real<&R::u>("U"),
          real<&R::p_value>("PValue"),
          {"UTestMethod", T::text, [](const C&, const R& r) { return Cell{r.u_test_method}; }},
          real<&R::cycles_ratio>("CyclesRatio"),
          real<&R::cycles_ci_lower>("CyclesCI_Lower"),
          real<&R::cycles_ci_upper>("CyclesCI_Upper"),
          real<&R::cycles_p_value>("CyclesPValue"),
          {"Verdict", T::text, [](const C&, const R& r) { return Cell{to_string(r.verdict)}; }},
          {"Reason", T::text, [](const C&, const R& r) { return Cell{r.reason}; }},
          {"Flags", T::text,
           [](const C&, const R& r) { return Cell{detail::joined_names(r.flags, [](const std::string& f) { return f; })}; }},
      },
      1,
      [](const C&, const R& r) { return r.config; }};
  return table;
}

}  // namespace

const std::vector<ColumnSpec>& comparison_columns() {
  static const std::vector<ColumnSpec> specs = comparison_table().specs();
  return specs;
}

Table Comparison::to_table() const { return comparison_table().table(*this, rows, axis_names); }

namespace detail {

const std::vector<DerivedFormat<Comparison>>& comparison_formats() {
  static const std::vector<DerivedFormat<Comparison>> formats{
      {"comparison table CSV", "comparison.csv", &write_table_csv<Comparison, &Comparison::to_table>},
      {"comparison JSON", "comparison.json", [](const Comparison& c, const std::string& path) { c.write_json(path); }},
  };
  return formats;
}

}  // namespace detail

}  // namespace kscope

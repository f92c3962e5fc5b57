#pragma once
// Comparing two Results: for every (annotation, config, metric), is the candidate faster, slower
// or the same as the baseline within noise? Decided on the raw per-run samples of both sides by a
// two-sided Mann-Whitney U test and a percentile-bootstrap interval of the ratio of medians.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "kscope/columns.hpp"
#include "kscope/results.hpp"
#include "kscope/verdict.hpp"
#include "kscope/table.hpp"
#include "kscope/value.hpp"

namespace kscope {

// What a comparison says as a gate (kscope compare's exit status): slower when a row is slower;
// otherwise cannot_judge when a row measured on both sides has too few samples on a side; else passed.
// ambiguous, unstable and changed rows do not fail it (the command prints their reasons).
enum class Gate { passed, slower, cannot_judge };
std::string to_string(Gate g);  // "passed", "slower", "cannot_judge"

// One side of a comparison row; count 0 and NaN values on the side a row is missing from.
struct ComparedSide {
  std::optional<std::size_t> config_index;  // into that side's Results::configs()
  std::size_t count = 0;                    // valid samples
  std::size_t measured = 0;                 // samples, NaN ones (runs that failed or recorded nothing) included
  double median = NAN, mean = NAN, rsd_pct = NAN;  // of the valid samples; RSD in %
  double observed_sm_clock_mhz = NAN;       // the summary row's mean observed SM clock
};

// One row of a comparison: an (annotation, config, metric) of both sides, its statistics and verdict.
struct ComparisonRow {
  std::string annotation;     // the region
  std::vector<Value> config;  // one value per Comparison::axis_names
  std::string metric;         // the Metric column
  std::string unit;           // the Unit column
  MetricDirection direction = MetricDirection::undefined;  // which way is better
  ComparedSide baseline;      // the baseline's statistics of this row
  ComparedSide candidate;     // the candidate's
  double ratio = NAN;                      // median(candidate) / median(baseline)
  double ci_lower = NAN, ci_upper = NAN;   // bootstrap interval of the ratio
  double u = NAN;                          // Mann-Whitney U of the candidate: pairs it wins, ties halved
  double p_value = NAN;                    // two-sided
  std::string u_test_method;               // "exact", "normal approximation", "not tested"
  // The same in cycles (each sample's duration times its run's SM clock), for a duration whose
  // clocks varied; NaN otherwise.
  double cycles_ratio = NAN, cycles_ci_lower = NAN, cycles_ci_upper = NAN, cycles_p_value = NAN;
  Verdict verdict = Verdict::unstable;  // see compare()
  std::string reason;                      // one line: why this verdict, with the numbers that decided it
  std::vector<std::string> flags;          // "gpu", "driver", "sm_clock": see Comparison::warnings
};

// What compare() returns: a row per (annotation, config, metric), the warnings, and the options used.
struct Comparison {
  std::vector<std::string> axis_names;  // the configs' axes
  std::vector<ComparisonRow> rows;  // the baseline's rows in its order, then rows only in the candidate
  // Facts that weaken the verdicts without preventing them: a different GPU model or driver, or
  // observed SM clocks that differ by more than threshold_pct (a compute-bound kernel's duration
  // scales with 1/clock, so such a difference alone could produce a verdict). Rows affected carry
  // the matching flag.
  std::vector<std::string> warnings;
  CompareOptions options;  // as compare() was given them

  // Annotation, the axes, then the other comparison_columns() (Metric, Unit, Direction, ...,
  // Verdict, Reason, Flags).
  Table to_table() const;
  std::size_t count(Verdict verdict) const;  // the rows of this verdict
  // What a CI gate concludes: slower when a row is slower, cannot_judge when a row lacks samples,
  // else passed (the exit codes of `kscope compare`).
  Gate gate() const;

  // The comparison as JSON: "options", "warnings", "gate" and "rows" (to_table() as write_json
  // writes tables).
  void write_json(std::ostream& out) const;
  // The same JSON into the file at `path` (FileError where it cannot be written).
  void write_json(const std::string& path) const;
  // Writes each of its formats' files under `prefix` (an existing directory's name stands for that
  // directory): its table as CSV and its JSON, comparison.csv and comparison.json.
  void write_all(const std::string& prefix) const;
};

// The columns of Comparison::to_table(), its config axes left out: Annotation, Metric, Unit,
// Direction, BaselineMedian, CandidateMedian, BaselineMean, CandidateMean, BaselineRuns,
// CandidateRuns, BaselineRSDPct, CandidateRSDPct, Ratio, CI_Lower, CI_Upper, CI_Method, U, PValue,
// UTestMethod, CyclesRatio, CyclesCI_Lower, CyclesCI_Upper, CyclesPValue, Verdict, Reason, Flags.
const std::vector<ColumnSpec>& comparison_columns();

// Compares the candidate with the baseline, row by row; the rows of both are matched by
// annotation, config (axis name -> value) and metric. Samples of throttled runs are left out when
// the side's Settings::throttled_runs excluded them from its statistics.
// Refuses (ConfigError) results of different backends, cache control, clock control, replay mode
// (counter backends) or config axes: their numbers measure different things.
Comparison compare(const Results& baseline, const Results& candidate, const CompareOptions& options = {});

}  // namespace kscope

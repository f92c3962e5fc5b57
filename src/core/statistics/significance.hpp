#pragma once
// Decides whether a candidate's samples of one metric differ from a baseline's: a Mann-Whitney U
// test, a bootstrap interval for the ratio of medians, the metric's direction, and the verdict
// that combines them. Plain samples in, plain structs out: the Results-level comparison builds on
// these. NaN samples (failed runs) are ignored everywhere.
#include <cstddef>
#include <cmath>
#include <cstdint>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "kscope/verdict.hpp"
#include "kscope/detail/enum_names.hpp"

namespace kscope::detail {

using kscope::CompareOptions;
using kscope::MetricDirection;
using kscope::Verdict;

// ---- Mann-Whitney U test ------------------------------------------------------------------------

enum class UTestMethod {
  exact,                 // p from the exact null distribution of U
  normal_approximation,  // p from the normal approximation, tie-corrected, continuity-corrected
  not_tested,            // a sample has no valid value: U and p are NaN
};
std::string to_string(UTestMethod m);
std::span<const EnumName<UTestMethod>> enum_names(UTestMethod);  // "exact", "normal approximation", "not tested"

struct UTestResult {
  double u = 0;        // U of x: pairs (x_i, y_j) with x_i > y_j, plus half the pairs that tie
  double p_value = 0;  // two-sided
  UTestMethod method = UTestMethod::not_tested;
};

// The exact distribution is used when there are no ties and n_x * n_y <= this (e.g. 50 runs per
// side): its counting recurrence costs about (n_x * n_y)^2 / 2 additions, 3 million here. Beyond
// it the normal approximation's p is within 0.002 of the exact one when both samples hold 30 or
// more values (measured against scipy's exact p; 0.006 for 10 values against 251, 0.011 for 5
// against 501).
inline constexpr std::size_t exact_u_test_max_pairs = 2500;

// Two-sided Mann-Whitney U test of two independent samples. U and p equal
// scipy.stats.mannwhitneyu(x, y, alternative="two-sided") with method="exact" (no ties, small
// samples) or method="asymptotic", use_continuity=True (otherwise). Identical samples give p = 1.
UTestResult mann_whitney_u(std::span<const double> x, std::span<const double> y);

// One-sided: the p-value of "x tends to be larger than y", from the pairs in which x is strictly
// larger (ties count against it, so tied samples keep the test at its level or below): exact up to
// exact_u_test_max_pairs pairs (without ties, scipy's mannwhitneyu(x, y, alternative="greater",
// method="exact")), else the continuity-corrected normal approximation. NaN when a sample has no
// valid value.
double u_test_p_greater(std::span<const double> x, std::span<const double> y);

// ---- Median of paired ratios -------------------------------------------------------------------

// The median of the ratios and its distribution-free interval: the order statistics k and n-k+1
// (1-based) of the sorted ratios, k the largest with P(Binomial(n, 1/2) < k) <= (1 - confidence)/2,
// so that the interval covers the median with at least that confidence; NaN bounds when even the
// smallest and largest ratio do not reach it (fewer than 6 ratios at 95%). NaN ratios are dropped.
struct MedianInterval {
  double median = NAN;
  double lower = NAN;
  double upper = NAN;
};
MedianInterval median_interval(std::vector<double> values, double confidence);

// ---- Cycles -------------------------------------------------------------------------------------

// Whether a unit is one of elapsed time (ns, us, µs, ms, s, nsecond ... seconds; not cycles).
bool is_time_unit(std::string_view unit);
// Each duration times the SM clock (MHz) observed around its run, in the samples' order: the
// cycles it took, in thousands (ns * MHz = 1e-3 cycles; ratios do not care). NaN where either is.
std::vector<double> cycles_of(std::span<const double> durations, std::span<const double> sm_clocks_mhz);
// Whether the SM clocks of every valid duration of both sides are known and not all the same:
// then a change in time is confirmed in cycles before it is called one.
bool clocks_vary(std::span<const double> baseline, std::span<const double> baseline_clocks,
                 std::span<const double> candidate, std::span<const double> candidate_clocks);

// ---- Bootstrap interval of the ratio of medians --------------------------------------------------

struct Interval {
  double lower = 0, upper = 0;
};

// Percentile bootstrap interval of median(candidate) / median(baseline): `resamples` times, both
// samples are resampled with replacement and the ratio of their medians recorded; the interval is
// the k-th smallest and k-th largest ratio, k = floor((resamples + 1) * (1 - confidence) / 2).
// The generator is std::mt19937_64 seeded with `seed`, its raw output mapped to indices by
// rejection (no modulo bias), and the samples are sorted first: the same samples in any order give
// the same interval with every compiler and standard library. A ratio x/0 is +inf and 0/0 is 1 (the
// medians are equal). NaN bounds when a sample has no valid value or a value is negative.
// Throws ConfigError when confidence is outside (0, 1) or a tail would hold no resample.
Interval median_ratio_interval(std::span<const double> baseline, std::span<const double> candidate,
                               double confidence, std::size_t resamples, std::uint64_t seed);

// The smallest one-sided p-value the exact U test can give m values against n: all of one side
// above the other, 1 / (m + n choose m).
double smallest_one_sided_p(std::size_t m, std::size_t n);

// The fewest values a side (the same on both) with which the two-sided U test can reach p < alpha.
std::size_t values_for_significance(double alpha);

// ---- Metric direction -----------------------------------------------------------------------------

// Infers whether a metric improves by falling or rising, from its name and unit (case-insensitive):
// - names with "stall" are lower-is-better whatever the unit (stall percentages are time lost);
// - a duration unit (ns, us, µs, ms, s, nsecond, usecond, msecond, second(s), cycle(s)) is
//   lower-is-better;
// - a rate unit (anything per duration or per cycle: GB/s, TFLOP/s, byte/second, inst/cycle) or
//   "%" is higher-is-better;
// - otherwise the name decides: pct_of_peak, throughput, per_second, per_cycle, bandwidth, flops
//   are higher-is-better; duration, time, cycles_elapsed, latency are lower-is-better;
// - anything else (bytes, inst_executed, sectors: counts of work) is undefined.
MetricDirection infer_metric_direction(std::string_view name, std::string_view unit);

// ---- Verdict of one comparison row -------------------------------------------------------------
//
// Rules, in order (ratio = median(candidate) / median(baseline), CI = its bootstrap interval,
// t = threshold_pct / 100):
// 1. too_few_samples: either side has fewer than min_samples valid values, or too few for the U
//    test to reach p < alpha at all (min_samples lowered below 4 a side at alpha 0.05: a `same` there
//    would only say that nothing could be shown); unstable: an RSD above max_rsd_pct, or a negative
//    value (a ratio of medians means nothing then). These cannot be judged.
// 2. A change is significant only when p < alpha AND the whole CI lies outside the same_band:
//    CI lower > 1 + t, or CI upper < 1 / (1 + t) (strictly). Then: lower_is_better → slower when the
//    ratio rose, faster when it fell; higher_is_better → the reverse; undefined → changed.
//    With the per-sample SM clocks of a duration (SampleClocks) that vary, the same change must also
//    be significant, by the same rule, in cycles; otherwise the verdict is ambiguous (NVBench's
//    compare-robust confirms FAST and SLOW in cycle space the same way).
// 3. Otherwise same: not significant, or the shift (or part of its CI) is within the threshold.
//
// Both tests are required because each guards the other: the percentile bootstrap's interval of
// a median is too narrow for small samples, where the U test cannot reach p < alpha (with equal
// sizes, 0.05 needs 4 values per side); the U test finds tiny shifts significant given enough runs, which
// the threshold then calls same. Requiring the whole CI beyond the threshold is conservative: a
// true shift just past it is reported only once enough runs narrow the interval, so a CI gate does
// not flap on a shift that noise alone could put on either side of the threshold.
//
// The defaults and their reasons: CompareOptions in kscope/verdict.hpp.

struct SampleSummary {
  std::size_t count = 0;     // valid (non-NaN) values
  std::size_t measured = 0;  // values, NaN ones included
  double median = 0, mean = 0, rsd_pct = 0;  // NaN where undefined (no value; rsd: n < 2 or mean 0)
};

// A change of one quantity between the sides: the ratio of medians, its interval and the U test.
struct Shift {
  double ratio = 0;     // median(candidate) / median(baseline); NaN with a negative value
  Interval ratio_ci;    // bootstrap interval of the ratio at options.confidence
  UTestResult u_test;   // mann_whitney_u(candidate, baseline): U counts candidate > baseline
  bool rose = false, fell = false;  // significant (p < alpha) and the whole CI beyond the threshold
};

struct SampleComparison {
  SampleSummary baseline, candidate;
  double ratio = 0;     // median(candidate) / median(baseline); NaN with a negative value
  Interval ratio_ci;    // bootstrap interval of the ratio at options.confidence
  UTestResult u_test;   // mann_whitney_u(candidate, baseline): U counts candidate > baseline
  std::optional<Shift> cycles;  // the same in cycles, when the clocks varied
  Verdict verdict = Verdict::unstable;
  std::string reason;   // one line: why this verdict, with the numbers that decided it
};

// The SM clock (MHz) observed around the run of each sample, in the samples' order (NaN: unknown).
struct SampleClocks {
  std::span<const double> baseline, candidate;
};

// Any samples (empty, all NaN) give a verdict. The options must have passed CompareOptions::validate,
// which compare() calls once for all its rows. `clocks`: for a duration, its samples' clocks.
SampleComparison compare_samples(std::span<const double> baseline, std::span<const double> candidate,
                                 MetricDirection direction, const CompareOptions& options,
                                 const SampleClocks* clocks = nullptr);

// A CompareOptions field as the caller spells it: CompareOptions::min_samples (C++), min_samples
// (Python's keyword), --min-samples (the kscope compare command).
std::string compare_option(const std::string& field);

}  // namespace kscope::detail

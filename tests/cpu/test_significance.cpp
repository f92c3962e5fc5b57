#include "core/statistics/significance.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "kscope/errors.hpp"
#include "kscope/statistics.hpp"

namespace {

constexpr double nan = std::numeric_limits<double>::quiet_NaN();
constexpr double inf = std::numeric_limits<double>::infinity();

using kscope::ConfigError;
using kscope::detail::compare_samples;
using kscope::CompareOptions;
using kscope::detail::SampleComparison;
using kscope::detail::infer_metric_direction;
using kscope::detail::Interval;
using kscope::detail::mann_whitney_u;
using kscope::detail::median_ratio_interval;
using kscope::MetricDirection;
using kscope::same_band;
using kscope::detail::UTestMethod;
using kscope::Verdict;

// n evenly spaced values from center * (1 - half_width_pct/100) to center * (1 + half_width_pct/100).
std::vector<double> spread(double center, double half_width_pct, std::size_t n) {
  const double low = center * (1 - half_width_pct / 100);
  const double step = 2 * center * half_width_pct / 100 / static_cast<double>(n - 1);
  std::vector<double> values(n);
  for (std::size_t i = 0; i < n; ++i) values[i] = low + step * static_cast<double>(i);
  return values;
}

std::vector<double> repeated(double value, std::size_t n) { return std::vector<double>(n, value); }

// ---- Mann-Whitney U ------------------------------------------------------------------------------
// Expected values: scipy 1.10 stats.mannwhitneyu(x, y, alternative="two-sided", method=...), and by
// hand where the comment shows how.

TEST(MannWhitneyU, SmallSamplesWithoutTiesUseTheExactDistribution) {
  // x entirely below y: U = 0; one of the C(7,3) = 35 orderings is as extreme on each side.
  auto r = mann_whitney_u(std::vector<double>{1, 2, 3}, std::vector<double>{4, 5, 6, 7});
  EXPECT_EQ(r.method, UTestMethod::exact);
  EXPECT_DOUBLE_EQ(r.u, 0.0);
  EXPECT_DOUBLE_EQ(r.p_value, 2.0 / 35);  // scipy: 0.05714285714285714

  // U = 2 + 3 + 5 + 5 = 15 of 20 pairs. P(U <= 5) counts the partitions of 0..5 into at most 4
  // parts of at most 5: 1 + 1 + 2 + 3 + 5 + 6 = 18 of C(9,4) = 126; p = 2 * 18/126.
  r = mann_whitney_u(std::vector<double>{3, 5, 8, 9}, std::vector<double>{1, 2, 4, 6, 7});
  EXPECT_EQ(r.method, UTestMethod::exact);
  EXPECT_DOUBLE_EQ(r.u, 15.0);
  EXPECT_DOUBLE_EQ(r.p_value, 36.0 / 126);  // scipy: 0.2857142857142857
}

TEST(MannWhitneyU, SwappingTheSamplesMirrorsU) {
  const std::vector<double> x{3, 5, 8, 9};
  const std::vector<double> y{1, 2, 4, 6, 7};
  const auto forward = mann_whitney_u(x, y);
  const auto backward = mann_whitney_u(y, x);
  EXPECT_DOUBLE_EQ(backward.u, 20 - forward.u);
  EXPECT_DOUBLE_EQ(backward.p_value, forward.p_value);
}

TEST(MannWhitneyU, TiesUseTheTieCorrectedNormalApproximation) {
  // Pooled ranks: 10:1 11:2 12,12,12:4 13,13:6.5 14:8 15:9 16:10 17:11. x's rank sum 26, so
  // U = 26 - 15 = 11; mean 15. Ties: 3^3-3 + 2^3-2 = 30; variance 30/12 * (12 - 30/110) = 29.318;
  // z = (15 - 11 - 0.5) / 5.4146 = 0.6464; p = 2 * (1 - Phi(z)).
  const auto r = mann_whitney_u(std::vector<double>{10, 12, 12, 14, 15},
                                std::vector<double>{11, 12, 13, 13, 16, 17});
  EXPECT_EQ(r.method, UTestMethod::normal_approximation);
  EXPECT_DOUBLE_EQ(r.u, 11.0);
  EXPECT_NEAR(r.p_value, 0.5180220945903762, 1e-12);  // scipy, method="asymptotic"
}

TEST(MannWhitneyU, IdenticalSamplesGivePOne) {
  auto r = mann_whitney_u(repeated(5, 3), repeated(5, 3));  // every value tied: no variance
  EXPECT_DOUBLE_EQ(r.u, 4.5);
  EXPECT_DOUBLE_EQ(r.p_value, 1.0);
  r = mann_whitney_u(std::vector<double>{1, 2, 3}, std::vector<double>{3, 1, 2});  // ties across
  EXPECT_EQ(r.method, UTestMethod::normal_approximation);
  EXPECT_DOUBLE_EQ(r.u, 4.5);  // half of the 9 pairs: the mean of U
  EXPECT_DOUBLE_EQ(r.p_value, 1.0);
}

TEST(MannWhitneyU, OneSampleEntirelyBelowTheOther) {
  // Exact: 1 of C(10,5) = 252 orderings at each extreme.
  auto r = mann_whitney_u(std::vector<double>{1, 2, 3, 4, 5}, std::vector<double>{6, 7, 8, 9, 10});
  EXPECT_DOUBLE_EQ(r.u, 0.0);
  EXPECT_DOUBLE_EQ(r.p_value, 2.0 / 252);
  // 60 against 60 is beyond the exact bound: z = (1800 - 0.5) / sqrt(3600 * 121 / 12).
  std::vector<double> low(60), high(60);
  for (int i = 0; i < 60; ++i) {
    low[i] = i;
    high[i] = i + 100;
  }
  r = mann_whitney_u(low, high);
  EXPECT_EQ(r.method, UTestMethod::normal_approximation);
  EXPECT_DOUBLE_EQ(r.u, 0.0);
  EXPECT_NEAR(r.p_value / 3.5565709749847226e-21, 1.0, 1e-9);  // scipy, method="asymptotic"
}

TEST(MannWhitneyU, SingleValues) {
  // One value each: U is 0 or 1 with probability 1/2 each, so any outcome has p = 1.
  auto r = mann_whitney_u(std::vector<double>{1}, std::vector<double>{2});
  EXPECT_EQ(r.method, UTestMethod::exact);
  EXPECT_DOUBLE_EQ(r.u, 0.0);
  EXPECT_DOUBLE_EQ(r.p_value, 1.0);
  // One value against four: its rank is uniform on 1..5, so the lowest has p = 2/5.
  r = mann_whitney_u(std::vector<double>{1}, std::vector<double>{2, 3, 4, 5});
  EXPECT_DOUBLE_EQ(r.u, 0.0);
  EXPECT_DOUBLE_EQ(r.p_value, 0.4);
}

TEST(MannWhitneyU, ExactUpToFiftyByFiftyThenNormal) {
  std::vector<double> x(50), y(51);
  for (int i = 0; i < 50; ++i) x[i] = i;
  for (int j = 0; j < 51; ++j) y[j] = j + 20.5;
  // 50 x 50 = 2500 pairs: exact. U = sum over x = 21..49 of (x - 20) = 435.
  auto r = mann_whitney_u(x, std::span<const double>(y).first(50));
  EXPECT_EQ(r.method, UTestMethod::exact);
  EXPECT_DOUBLE_EQ(r.u, 435.0);
  EXPECT_NEAR(r.p_value / 3.355337501288909e-09, 1.0, 1e-9);  // scipy, method="exact"
  // 50 x 51 = 2550 pairs: normal approximation.
  r = mann_whitney_u(x, y);
  EXPECT_EQ(r.method, UTestMethod::normal_approximation);
  EXPECT_DOUBLE_EQ(r.u, 435.0);
  EXPECT_NEAR(r.p_value / 1.1828277481256391e-08, 1.0, 1e-9);  // scipy, method="asymptotic"
}

TEST(MannWhitneyU, NanValuesAreIgnored) {
  const auto r = mann_whitney_u(std::vector<double>{1, nan, 2, 3}, std::vector<double>{nan, 4, 5, 6, 7});
  EXPECT_DOUBLE_EQ(r.u, 0.0);
  EXPECT_DOUBLE_EQ(r.p_value, 2.0 / 35);
}

TEST(MannWhitneyU, EmptySampleIsNotTested) {
  for (const auto& x : {std::vector<double>{}, std::vector<double>{nan, nan}}) {
    const auto r = mann_whitney_u(x, std::vector<double>{1, 2});
    EXPECT_EQ(r.method, UTestMethod::not_tested);
    EXPECT_TRUE(std::isnan(r.u));
    EXPECT_TRUE(std::isnan(r.p_value));
  }
  EXPECT_EQ(mann_whitney_u(std::vector<double>{1}, std::vector<double>{}).method, UTestMethod::not_tested);
}

// ---- Bootstrap interval of the ratio of medians ----------------------------------------------------

const std::vector<double> reference_baseline{101.3, 99.8, 100.4, 102.9, 98.7, 100.1, 103.5, 99.2, 100.9};
const std::vector<double> reference_candidate{104.2, 106.8, 103.1, 105.5, 107.9,
                                               104.8, 103.9, 106.1, 105.0, 108.4};

TEST(MedianRatioInterval, MatchesTheStandardsGenerator) {
  // From tests/cpu/data/bootstrap_reference.py, the same procedure with mt19937_64 written from the
  // C++ standard: any standard library must give these exact bounds.
  Interval ci = median_ratio_interval(reference_baseline, reference_candidate, 0.95, 2000, 5489);
  EXPECT_DOUBLE_EQ(ci.lower, 1.0252672497570456);
  EXPECT_DOUBLE_EQ(ci.upper, 1.0675403225806452);
  ci = median_ratio_interval(reference_baseline, reference_candidate, 0.90, 999, 7);
  EXPECT_DOUBLE_EQ(ci.lower, 1.0325765054294176);
  EXPECT_DOUBLE_EQ(ci.upper, 1.063508064516129);
}

TEST(MedianRatioInterval, SameSeedSameIntervalWhateverTheOrder) {
  const Interval first = median_ratio_interval(reference_baseline, reference_candidate, 0.95, 2000, 42);
  std::vector<double> shuffled = reference_candidate;
  std::reverse(shuffled.begin(), shuffled.end());
  shuffled.push_back(nan);
  const Interval second = median_ratio_interval(reference_baseline, shuffled, 0.95, 2000, 42);
  EXPECT_EQ(first.lower, second.lower);
  EXPECT_EQ(first.upper, second.upper);
}

TEST(MedianRatioInterval, OtherSeedsDifferButCoverTheTrueRatio) {
  // The candidate is the baseline scaled by 1.25: the true ratio of medians is 1.25.
  const std::vector<double> baseline = spread(1000, 3, 15);
  std::vector<double> candidate = baseline;
  for (double& x : candidate) x *= 1.25;
  const Interval reference = median_ratio_interval(baseline, candidate, 0.95, 2000, 1);
  for (std::uint64_t seed : {2, 3, 99}) {
    const Interval ci = median_ratio_interval(baseline, candidate, 0.95, 2000, seed);
    EXPECT_LT(ci.lower, 1.25) << "seed " << seed;
    EXPECT_GT(ci.upper, 1.25) << "seed " << seed;
    EXPECT_TRUE(ci.lower != reference.lower || ci.upper != reference.upper) << "seed " << seed;
  }
}

TEST(MedianRatioInterval, ZeroMediansAndUndefinedRatios) {
  Interval ci = median_ratio_interval(repeated(0, 5), repeated(0, 5), 0.95, 2000, 1);  // 0/0: equal
  EXPECT_EQ(ci.lower, 1.0);
  EXPECT_EQ(ci.upper, 1.0);
  ci = median_ratio_interval(repeated(0, 5), repeated(5, 5), 0.95, 2000, 1);
  EXPECT_EQ(ci.lower, inf);
  ci = median_ratio_interval(std::vector<double>{}, repeated(5, 5), 0.95, 2000, 1);
  EXPECT_TRUE(std::isnan(ci.lower) && std::isnan(ci.upper));
  ci = median_ratio_interval(std::vector<double>{1, -1, 2}, repeated(5, 5), 0.95, 2000, 1);
  EXPECT_TRUE(std::isnan(ci.lower) && std::isnan(ci.upper));
}

TEST(MedianRatioInterval, RejectsBadConfidenceAndTooFewResamples) {
  const std::vector<double> x{1, 2, 3};
  EXPECT_THROW(median_ratio_interval(x, x, 1.0, 2000, 1), ConfigError);
  EXPECT_THROW(median_ratio_interval(x, x, nan, 2000, 1), ConfigError);
  // A 95% interval needs floor((R + 1) * 0.025) >= 1: R = 39 is the least.
  EXPECT_NO_THROW(median_ratio_interval(x, x, 0.95, 39, 1));
  try {
    median_ratio_interval(x, x, 0.95, 38, 1);
    FAIL() << "38 resamples accepted";
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()),
              "CompareOptions::resamples = 38 is too few for a 95% interval: each tail needs at least one resample, so at "
              "least 39 (the default is 2000)");
  }
}

// ---- Metric direction -------------------------------------------------------------------------------

TEST(MetricDirection, InferredFromNameAndUnit) {
  struct Case {
    const char* name;
    const char* unit;
    MetricDirection expected;
  };
  const Case cases[] = {
      // kscope's own metrics
      {"cupti__kernel_duration", "ns", MetricDirection::lower_is_better},
      {"events__region_duration", "ns", MetricDirection::lower_is_better},
      {"gpu__time_duration.sum", "nsecond", MetricDirection::lower_is_better},
      {"sm__throughput.avg.pct_of_peak_sustained_elapsed", "%", MetricDirection::higher_is_better},
      {"dram__bytes_read.sum", "byte", MetricDirection::undefined},
      {"bandwidth", "GB/s", MetricDirection::higher_is_better},
      // duration units, whatever the name
      {"t", "us", MetricDirection::lower_is_better},
      {"t", "\u00b5s", MetricDirection::lower_is_better},
      {"t", "ms", MetricDirection::lower_is_better},
      {"t", " s ", MetricDirection::lower_is_better},
      {"t", "usecond", MetricDirection::lower_is_better},
      {"t", "msecond", MetricDirection::lower_is_better},
      {"t", "second", MetricDirection::lower_is_better},
      {"sm__cycles_elapsed.max", "cycle", MetricDirection::lower_is_better},
      {"x", "cycles", MetricDirection::lower_is_better},
      // rate units
      {"perf", "TFLOP/s", MetricDirection::higher_is_better},
      {"perf", "FLOP/s", MetricDirection::higher_is_better},
      {"dram__bytes_read.sum.per_second", "Gbyte/second", MetricDirection::higher_is_better},
      {"sm__inst_executed.avg.per_cycle_active", "inst/cycle", MetricDirection::higher_is_better},
      {"sm__cycles_elapsed.avg.per_second", "GHz", MetricDirection::higher_is_better},
      {"l1tex__t_sector_hit_rate.pct", "%", MetricDirection::higher_is_better},
      // stalls are time lost, even as percentages
      {"smsp__warp_issue_stalled_barrier_per_warp_active.pct", "%", MetricDirection::lower_is_better},
      // no unit: the name decides
      {"kernel_time", "", MetricDirection::lower_is_better},
      {"sm__cycles_elapsed.avg", "", MetricDirection::lower_is_better},
      {"dram__throughput.avg.pct_of_peak_sustained_elapsed", "", MetricDirection::higher_is_better},
      {"requests_per_second", "", MetricDirection::higher_is_better},
      {"TFLOPS", "", MetricDirection::higher_is_better},
      {"Kernel_Duration", "", MetricDirection::lower_is_better},
      // counts of work
      {"sm__inst_executed.sum", "inst", MetricDirection::undefined},
      {"lts__t_sectors.sum", "sector", MetricDirection::undefined},
      {"dram__bytes_write.sum", "bytes", MetricDirection::undefined},
      {"speedup", "x", MetricDirection::undefined},
      {"", "", MetricDirection::undefined},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(infer_metric_direction(c.name, c.unit), c.expected) << c.name << " [" << c.unit << "]";
  }
}

// ---- Verdicts ---------------------------------------------------------------------------------------

SampleComparison compare(const std::vector<double>& baseline, const std::vector<double>& candidate,
                   MetricDirection direction = MetricDirection::lower_is_better,
                   const CompareOptions& options = {}) {
  return compare_samples(baseline, candidate, direction, options);
}

bool mentions(const SampleComparison& c, const std::string& text) {
  return c.reason.find(text) != std::string::npos;
}

// 10 runs per side, 1% spread, 10% apart: fully separated (exact p = 2 / C(20,10) = 1.08e-5).
const std::vector<double> base_1000 = spread(1000, 1, 10);
const std::vector<double> plus_10pct = spread(1100, 1, 10);
const std::vector<double> minus_10pct = spread(900, 1, 10);

TEST(Verdict, ClearChangesFollowTheDirection) {
  struct Case {
    const std::vector<double>* candidate;
    MetricDirection direction;
    Verdict expected;
  };
  const Case cases[] = {
      {&plus_10pct, MetricDirection::lower_is_better, Verdict::slower},
      {&minus_10pct, MetricDirection::lower_is_better, Verdict::faster},
      {&plus_10pct, MetricDirection::higher_is_better, Verdict::faster},
      {&minus_10pct, MetricDirection::higher_is_better, Verdict::slower},
      {&plus_10pct, MetricDirection::undefined, Verdict::changed},
      {&minus_10pct, MetricDirection::undefined, Verdict::changed},
  };
  for (const Case& k : cases) {
    const SampleComparison c = compare(base_1000, *k.candidate, k.direction);
    EXPECT_EQ(c.verdict, k.expected) << to_string(k.direction) << ": " << c.reason;
    EXPECT_EQ(c.u_test.method, UTestMethod::exact);
    EXPECT_NEAR(c.u_test.p_value, 1.082508822446903e-05, 1e-15);  // scipy, method="exact"
  }
  const SampleComparison slower = compare(base_1000, plus_10pct);
  EXPECT_DOUBLE_EQ(slower.ratio, 1.1);
  EXPECT_GT(slower.ratio_ci.lower, 1.02);
  EXPECT_LT(slower.ratio_ci.upper, 1.2);
  EXPECT_DOUBLE_EQ(slower.u_test.u, 100.0);  // every candidate run is above every baseline run
  EXPECT_TRUE(mentions(slower, "median +10.0% (95% CI +")) << slower.reason;
  EXPECT_TRUE(mentions(slower, "p = 1.1e-05")) << slower.reason;
}

TEST(Verdict, ReportsBothSummaries) {
  const SampleComparison c = compare({1, 2, 3, nan, 10, 4}, {2, 4, 6, 8, 10});
  EXPECT_EQ(c.baseline.count, 5u);
  EXPECT_DOUBLE_EQ(c.baseline.median, 3.0);
  EXPECT_DOUBLE_EQ(c.baseline.mean, 4.0);
  EXPECT_DOUBLE_EQ(c.candidate.median, 6.0);
  EXPECT_DOUBLE_EQ(c.candidate.mean, 6.0);
  EXPECT_NEAR(c.candidate.rsd_pct, 100 * std::sqrt(10.0) / 6, 1e-12);  // s^2 = 40 / 4
  EXPECT_DOUBLE_EQ(c.ratio, 2.0);
}

TEST(Verdict, SmallSignificantShiftOfAShortKernelIsSame) {
  // A 2 us kernel 0.5% slower, 20 runs each, fully separated: exact p = 2 / C(40,20) = 1.5e-11,
  // but the whole CI is inside +-2%.
  const SampleComparison c = compare(spread(2000, 0.2, 20), spread(2010, 0.2, 20));
  EXPECT_NEAR(c.u_test.p_value, 2 / 137846528820.0, 1e-20);
  EXPECT_NEAR(c.ratio, 1.005, 1e-12);
  EXPECT_EQ(c.verdict, Verdict::same) << c.reason;
  EXPECT_TRUE(mentions(c, "within threshold")) << c.reason;
}

TEST(Verdict, SignificantShiftWhoseIntervalReachesInsideTheThresholdIsSame) {
  // Median +2.5%, p = 2.2e-5 (scipy, exact), but the CI (about +1.2% to +3.8%) reaches below +2%.
  const SampleComparison c = compare(spread(1000, 0.5, 10), spread(1025, 2, 10));
  EXPECT_LT(c.u_test.p_value, 0.05);
  EXPECT_LT(c.ratio_ci.lower, 1.02);
  EXPECT_GT(c.ratio_ci.upper, 1.02);
  EXPECT_EQ(c.verdict, Verdict::same) << c.reason;
  EXPECT_TRUE(mentions(c, "does not lie outside [-1.96%, +2%]")) << c.reason;
}

TEST(Verdict, TenPercentOnThreeSamplesIsNeverSlower) {
  // Median +10%, exact p = 0.2 (U = 8 of 9; scipy) on 3 runs each.
  const std::vector<double> baseline{1000, 1050, 980};
  const std::vector<double> candidate{1100, 1020, 1150};
  SampleComparison c = compare(baseline, candidate);
  EXPECT_EQ(c.verdict, Verdict::too_few_samples) << c.reason;
  EXPECT_EQ(c.reason, "baseline has 3 valid values, fewer than CompareOptions::min_samples (5)");
  EXPECT_DOUBLE_EQ(c.u_test.p_value, 0.2);  // computed even when no verdict is given

  // min_samples lowered to 3 gives no `same` either: 3 against 3 can never reach p < 0.05.
  CompareOptions three;
  three.min_samples = 3;
  c = compare(baseline, candidate, MetricDirection::lower_is_better, three);
  EXPECT_EQ(c.verdict, Verdict::too_few_samples) << c.reason;
  EXPECT_EQ(c.reason, "with 3 and 3 valid values the U test cannot reach p < CompareOptions::alpha (0.05): its "
                      "smallest p is 0.1, so no change could be shown; measure each side at least 4 times");
}

TEST(Verdict, ThresholdBoundaryIsStrict) {
  // Constant runs: every resample gives the same ratio, so the CI is the ratio itself; the ties
  // within each side leave the normal approximation p = 0.0040 (scipy). The band is
  // [1/1.02, 1.02]: 102 against 100 and 100 against 102 sit on it.
  struct Case {
    double baseline, candidate;
    Verdict expected;
  };
  for (const Case k : {Case{100, 102, Verdict::same}, Case{100, 102.01, Verdict::slower},
                       Case{102, 100, Verdict::same}, Case{102, 99.99, Verdict::faster}}) {
    const SampleComparison c = compare(repeated(k.baseline, 5), repeated(k.candidate, 5));
    EXPECT_NEAR(c.u_test.p_value, 0.003976751709788651, 1e-12);
    EXPECT_EQ(c.ratio_ci.lower, c.ratio_ci.upper);
    EXPECT_EQ(c.verdict, k.expected) << k.baseline << " -> " << k.candidate << ": " << c.reason;
  }
}

TEST(Verdict, SwappingTheSidesMirrorsTheVerdict) {
  // "same" is symmetric in the log of the ratio: a pair is faster one way exactly when it is slower
  // the other. With the band [0.98, 1.02] of before, 100 -> 98 was same while 98 -> 100 (+2.04%)
  // was slower.
  const auto mirrored = [](Verdict v) {
    return v == Verdict::faster ? Verdict::slower : v == Verdict::slower ? Verdict::faster : v;
  };
  for (const double candidate : {97.0, 97.99, 98.0, 98.03, 98.04, 99.0, 101.0, 101.99, 102.0, 102.01, 103.0}) {
    const SampleComparison forward = compare(repeated(100, 5), repeated(candidate, 5));
    const SampleComparison backward = compare(repeated(candidate, 5), repeated(100, 5));
    EXPECT_EQ(backward.verdict, mirrored(forward.verdict)) << candidate << ": " << forward.reason << " / " << backward.reason;
  }
  EXPECT_EQ(compare(repeated(100, 5), repeated(98, 5)).verdict, Verdict::faster);
  EXPECT_EQ(compare(repeated(98, 5), repeated(100, 5)).verdict, Verdict::slower);
  EXPECT_EQ(same_band(2).lower, 100.0 / 102.0);
  EXPECT_EQ(same_band(2).upper, 1.02);
}

TEST(Verdict, AlphaBoundaryIsStrict) {
  // 5 against 5, fully separated: exact p = 2/252 = 0.0079.
  const std::vector<double> base{100, 101, 102, 103, 104};
  const std::vector<double> slower{120, 121, 122, 123, 124};
  CompareOptions options;
  options.alpha = 2.0 / 252;  // the smallest p 5 values a side can give: no change can be shown
  EXPECT_EQ(compare(base, slower, MetricDirection::lower_is_better, options).verdict, Verdict::too_few_samples);
  options.alpha = 0.008;
  EXPECT_EQ(compare(base, slower, MetricDirection::lower_is_better, options).verdict, Verdict::slower);
}

TEST(Verdict, MinSamplesCountsValidValuesOnEachSide) {
  std::vector<double> five_of_seven{1000, nan, 1001, 1002, nan, 1003, 1004};
  EXPECT_EQ(compare(five_of_seven, plus_10pct).verdict, Verdict::slower);
  const SampleComparison c = compare(plus_10pct, {1000, 1001, nan, 1002, 1003});
  EXPECT_EQ(c.verdict, Verdict::too_few_samples);
  EXPECT_EQ(c.reason, "candidate has 4 valid values of 5 (1 NaN: runs that failed or recorded nothing), fewer than "
                      "CompareOptions::min_samples (5)");
}

TEST(Verdict, RsdAboveTheLimitIsUnstable) {
  const std::vector<double> noisy{1000, 1300, 900, 1100, 700, 1000};
  const double rsd = kscope::summarize(noisy, 2.0).rsd_pct;
  CompareOptions options;
  options.max_rsd_pct = rsd;  // at the limit: judged
  EXPECT_NE(compare(base_1000, noisy, MetricDirection::lower_is_better, options).verdict, Verdict::unstable);
  options.max_rsd_pct = std::nextafter(rsd, 0.0);
  const SampleComparison c = compare(base_1000, noisy, MetricDirection::lower_is_better, options);
  EXPECT_EQ(c.verdict, Verdict::unstable);
  EXPECT_TRUE(mentions(c, "candidate RSD 20.0% is above CompareOptions::max_rsd_pct")) << c.reason;  // s = 200, mean 1000
  // Default limit 10%: the noisy side is unstable whichever side it is.
  EXPECT_EQ(compare(noisy, base_1000).verdict, Verdict::unstable);
}

TEST(Verdict, EmptySamplesAreTooFewAndNegativeOnesUnstable) {
  SampleComparison c = compare({}, base_1000);
  EXPECT_EQ(c.verdict, Verdict::too_few_samples);
  EXPECT_EQ(c.reason, "baseline has 0 valid values, fewer than CompareOptions::min_samples (5)");
  EXPECT_EQ(c.u_test.method, UTestMethod::not_tested);
  EXPECT_TRUE(std::isnan(c.ratio));
  EXPECT_TRUE(std::isnan(c.ratio_ci.lower));
  EXPECT_EQ(compare(base_1000, {nan, nan}).verdict, Verdict::too_few_samples);
  EXPECT_EQ(compare(base_1000, {nan, 1000}).reason,
            "candidate has 1 valid value of 2 (1 NaN: runs that failed or recorded nothing), fewer than "
            "CompareOptions::min_samples (5)");

  c = compare({-5, -4, -6, -5, -5}, {-1, -2, -1, -1, -2}, MetricDirection::undefined,
              CompareOptions{.max_rsd_pct = inf});
  EXPECT_EQ(c.verdict, Verdict::unstable);
  EXPECT_EQ(c.reason, "negative values: a ratio of medians cannot say which side is better");
  EXPECT_TRUE(std::isnan(c.ratio));
}

TEST(Verdict, IdenticalSamplesAreSame) {
  const SampleComparison c = compare(base_1000, base_1000);
  EXPECT_EQ(c.verdict, Verdict::same);
  EXPECT_DOUBLE_EQ(c.u_test.p_value, 1.0);
  EXPECT_DOUBLE_EQ(c.ratio, 1.0);
}

TEST(Verdict, ZeroCountersCompareByTheirMedians) {
  // A counter that stays 0 is unchanged; one that leaves 0 has changed beyond any threshold.
  SampleComparison c = compare(repeated(0, 6), repeated(0, 6), MetricDirection::undefined);
  EXPECT_EQ(c.verdict, Verdict::same) << c.reason;
  EXPECT_DOUBLE_EQ(c.ratio, 1.0);
  c = compare(repeated(0, 6), repeated(4096, 6), MetricDirection::undefined);
  EXPECT_EQ(c.verdict, Verdict::changed) << c.reason;
  EXPECT_EQ(c.ratio, inf);
}

TEST(Verdict, BadOptionsAreRefusedByName) {
  struct Case {
    CompareOptions options;
    const char* message;
  };
  const Case cases[] = {
      {{.threshold_pct = -1},
       "CompareOptions::threshold_pct must be a percentage from 0 up to (not including) 100, got -1 (the default is 2)"},
      {{.threshold_pct = 100},
       "CompareOptions::threshold_pct must be a percentage from 0 up to (not including) 100, got 100 (the default is 2)"},
      {{.alpha = 0}, "CompareOptions::alpha must lie strictly between 0 and 1, got 0 (the default is 0.05)"},
      {{.alpha = nan}, "CompareOptions::alpha must lie strictly between 0 and 1, got nan (the default is 0.05)"},
      {{.min_samples = 0}, "CompareOptions::min_samples is 0; at least one valid value per side is needed (the default is 5)"},
      {{.max_rsd_pct = 0},
       "CompareOptions::max_rsd_pct must be a positive percentage, got 0 (the default is 10; infinity turns the check off)"},
      {{.confidence = 95}, "CompareOptions::confidence must lie strictly between 0 and 1, got 95 (the default is 0.95)"},
      {{.resamples = 10},
       "CompareOptions::resamples = 10 is too few for a 95% interval: each tail needs at least one resample, so at least 39 "
       "(the default is 2000)"},
  };
  for (const Case& k : cases) {
    try {
      k.options.validate();
      ADD_FAILURE() << "accepted: " << k.message;
    } catch (const ConfigError& e) {
      EXPECT_EQ(std::string(e.what()), k.message);
    }
  }
  EXPECT_NO_THROW(compare(base_1000, plus_10pct, MetricDirection::lower_is_better,
                          {.threshold_pct = 0, .max_rsd_pct = inf}));
}

TEST(Verdict, Names) {
  EXPECT_EQ(to_string(Verdict::faster), "faster");
  EXPECT_EQ(to_string(Verdict::slower), "slower");
  EXPECT_EQ(to_string(Verdict::same), "same");
  EXPECT_EQ(to_string(Verdict::unstable), "unstable");
  EXPECT_EQ(to_string(Verdict::changed), "changed");
  EXPECT_EQ(to_string(MetricDirection::higher_is_better), "higher is better");
  EXPECT_EQ(to_string(UTestMethod::normal_approximation), "normal approximation");
}

}  // namespace

TEST(UTestGreater, IsExactWithoutTiesAndCountsATieAgainstLarger) {
  using kscope::detail::u_test_p_greater;
  // Every x above every y: one ordering of the (5 choose 2) = 10 (scipy: method="exact", "greater").
  EXPECT_DOUBLE_EQ(u_test_p_greater(std::vector<double>{3, 4, 5}, std::vector<double>{1, 2}), 0.1);
  std::vector<double> high, low;
  for (int i = 1; i <= 10; ++i) high.push_back(10 + i), low.push_back(i);
  EXPECT_NEAR(u_test_p_greater(high, low), 1.0 / 184756, 1e-15);
  EXPECT_DOUBLE_EQ(u_test_p_greater(low, high), 1.0);
  // A tie inside one sample changes no pair; a tie across them counts as x not larger:
  // x = {2, 3}, y = {1, 2} wins 3 of 4 pairs, P(U >= 3) = 2/6.
  low[1] = low[0];
  EXPECT_NEAR(u_test_p_greater(high, low), 1.0 / 184756, 1e-15);
  EXPECT_DOUBLE_EQ(u_test_p_greater(std::vector<double>{2, 3}, std::vector<double>{1, 2}), 1.0 / 3);
  // Beyond 2500 pairs: the normal approximation, still far below any level for 60 against 60.
  std::vector<double> x, y;
  for (int i = 0; i < 60; ++i) x.push_back(100 + i), y.push_back(i);
  EXPECT_LT(u_test_p_greater(x, y), 1e-15);
  EXPECT_TRUE(std::isnan(u_test_p_greater(x, std::vector<double>{})));
}

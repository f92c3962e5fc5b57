// kscope::compare on Results: matching rows, verdicts on the raw samples, refusals, warnings and
// flags, directions, rows on one side only.
#include "kscope/compare.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <memory>

#include "compare_fixtures.hpp"
#include "core/model/caller_language.hpp"
#include "core/statistics/significance.hpp"
#include "kscope/errors.hpp"
#include "kscope/statistics.hpp"

using namespace kscope;
using namespace kscope::testing_fixtures;

namespace {

const ComparisonRow& row_of(const Comparison& c, const std::string& annotation, const std::string& metric) {
  for (const auto& r : c.rows)
    if (r.annotation == annotation && r.metric == metric) return r;
  throw std::runtime_error("no row " + annotation + " " + metric);
}

std::string refusal(const Results& a, const Results& b) {
  try {
    compare(a, b);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "(compared)";
}

}  // namespace

TEST(Compare, VerdictsComeFromTheRawSamplesOfBothSides) {
  const Results base = make({"n"}, {{"copy", {1024}, "cupti__kernel_duration", "ns", around(1000)},
                                    {"scale", {1024}, "cupti__kernel_duration", "ns", around(500)},
                                    {"add", {1024}, "cupti__kernel_duration", "ns", around(2000)}});
  const Results cand = make({"n"}, {{"copy", {1024}, "cupti__kernel_duration", "ns", around(1100)},
                                    {"scale", {1024}, "cupti__kernel_duration", "ns", around(450)},
                                    {"add", {1024}, "cupti__kernel_duration", "ns", around(2000)}});
  const Comparison c = compare(base, cand);
  ASSERT_EQ(c.rows.size(), 3u);
  EXPECT_TRUE(c.warnings.empty());
  const ComparisonRow& copy = c.rows[0];
  EXPECT_EQ(copy.annotation, "copy");
  EXPECT_EQ(copy.config, std::vector<Value>{Value(1024)});
  EXPECT_EQ(copy.verdict, Verdict::slower) << copy.reason;
  EXPECT_EQ(copy.direction, MetricDirection::lower_is_better);
  EXPECT_DOUBLE_EQ(copy.ratio, 1.1);
  EXPECT_DOUBLE_EQ(copy.baseline.median, 1000);
  EXPECT_DOUBLE_EQ(copy.candidate.mean, 1100);
  EXPECT_EQ(copy.baseline.count, 10u);
  EXPECT_EQ(copy.baseline.config_index, std::optional<std::size_t>(0));
  // The same numbers as the sample-level comparison of the same values.
  const auto expected = detail::compare_samples(around(1000), around(1100), MetricDirection::lower_is_better, {});
  EXPECT_EQ(copy.p_value, expected.u_test.p_value);
  EXPECT_EQ(copy.u, 100);  // every candidate run above every baseline run
  EXPECT_EQ(copy.ci_lower, expected.ratio_ci.lower);
  EXPECT_EQ(copy.ci_upper, expected.ratio_ci.upper);
  EXPECT_EQ(copy.u_test_method, "exact");
  EXPECT_EQ(copy.reason, expected.reason);
  EXPECT_EQ(c.rows[1].verdict, Verdict::faster) << c.rows[1].reason;
  EXPECT_EQ(c.rows[2].verdict, Verdict::same) << c.rows[2].reason;
  EXPECT_EQ(c.count(Verdict::slower), 1u);
  EXPECT_EQ(c.count(Verdict::same), 1u);
}

TEST(Compare, ConfigsMatchByValueWhateverTheirOrder) {
  const Results base = make({"n", "dtype"}, {{"k", {16, "f32"}, "t", "ns", around(100)},
                                             {"k", {32, "f32"}, "t", "ns", around(200)}});
  // Another sweep order, and an integer 16 is not the double 16.0.
  const Results cand = make({"dtype", "n"}, {{"k", {"f32", 32}, "t", "ns", around(200)},
                                             {"k", {"f32", 16}, "t", "ns", around(100)}});
  const Comparison c = compare(base, cand);
  ASSERT_EQ(c.rows.size(), 2u);
  EXPECT_EQ(c.axis_names, (std::vector<std::string>{"n", "dtype"}));
  EXPECT_EQ(c.rows[0].config, (std::vector<Value>{16, "f32"}));
  EXPECT_EQ(c.rows[0].candidate.config_index, std::optional<std::size_t>(1));
  EXPECT_EQ(c.rows[0].verdict, Verdict::same);
  EXPECT_EQ(c.rows[1].verdict, Verdict::same);

  const Results doubles = make({"n", "dtype"}, {{"k", {16.0, "f32"}, "t", "ns", around(100)}});
  const Comparison d = compare(base, doubles);
  EXPECT_EQ(d.count(Verdict::only_in_baseline), 2u);
  EXPECT_EQ(d.count(Verdict::only_in_candidate), 1u);
}

TEST(Compare, RowsOnOneSideAreListedWithTheirOwnVerdict) {
  const Results base = make({"n"}, {{"k", {16}, "t", "ns", around(100)},
                                    {"k", {32}, "t", "ns", around(200)},
                                    {"gone", {16}, "t", "ns", around(50)}});
  const Results cand = make({"n"}, {{"k", {16}, "t", "ns", around(100)},
                                    {"k", {64}, "t", "ns", around(400)}});
  const Comparison c = compare(base, cand);
  ASSERT_EQ(c.rows.size(), 4u);
  EXPECT_EQ(c.rows[0].verdict, Verdict::same);
  EXPECT_EQ(c.rows[1].verdict, Verdict::only_in_baseline);
  EXPECT_EQ(c.rows[1].reason, "measured in the baseline only");
  EXPECT_DOUBLE_EQ(c.rows[1].baseline.median, 200);
  EXPECT_EQ(c.rows[1].candidate.count, 0u);
  EXPECT_FALSE(c.rows[1].candidate.config_index);
  EXPECT_TRUE(std::isnan(c.rows[1].ratio));
  EXPECT_EQ(c.rows[2].annotation, "gone");
  EXPECT_EQ(c.rows[2].verdict, Verdict::only_in_baseline);
  EXPECT_EQ(c.rows[3].config, std::vector<Value>{Value(64)});
  EXPECT_EQ(c.rows[3].verdict, Verdict::only_in_candidate);
  EXPECT_DOUBLE_EQ(c.rows[3].candidate.median, 400);
  ASSERT_EQ(c.warnings.size(), 1u);
  EXPECT_EQ(c.warnings[0], "2 rows measured only in the baseline and 1 only in the candidate (verdicts "
                           "only_in_baseline, only_in_candidate): an annotation, config or metric was added or removed");
}

TEST(Compare, RefusesResultsThatMeasureDifferentThings) {
  const Results base = make({"n"}, {{"k", {16}, "t", "ns", around(100)}});
  SessionInfo events = h200();
  events.backend = Backend::events;
  EXPECT_EQ(refusal(base, make({"n"}, {{"k", {16}, "t", "ns", around(100)}}, events)),
            "compare() refuses to compare results taken with different backends ('cupti' vs 'events'): their "
            "numbers measure different things. Measure both with the same backends");
  SessionInfo warm = h200();
  warm.cache_control = CacheControl::none;
  EXPECT_EQ(refusal(base, make({"n"}, {{"k", {16}, "t", "ns", around(100)}}, warm)),
            "compare() refuses to compare results taken with different cache_control ('all' vs 'none'): their "
            "numbers measure different things. Measure both with the same cache_control");
  SessionInfo locked = h200();
  locked.clock_control = ClockControl::base;
  EXPECT_EQ(refusal(base, make({"n"}, {{"k", {16}, "t", "ns", around(100)}}, locked)),
            "compare() refuses to compare results taken with different clock_control ('none' vs 'base'): their "
            "numbers measure different things. Measure both with the same clock_control");
  EXPECT_EQ(refusal(base, make({"m"}, {{"k", {16}, "t", "ns", around(100)}})),
            "compare() cannot match the configs of results with different config axes (baseline: 'n'; candidate: "
            "'m'): compare results of the same sweep; configs measured on one side only are listed as such");

  // Replay mode changes what counters, ncu and cupti measure (a kernel, or a region's range or span);
  // events always measure the region.
  Settings range;
  range.replay_mode = ReplayMode::range;
  for (const Backend backend : {Backend::counters, Backend::cupti}) {
    SessionInfo session = h200();
    session.backend = backend;
    const Results kernel_replay = make({"n"}, {{"k", {16}, "t", "ns", around(100)}}, session);
    EXPECT_EQ(refusal(kernel_replay, make({"n"}, {{"k", {16}, "t", "ns", around(100)}}, session, range)),
              "compare() refuses to compare results taken with different replay_mode ('kernel' vs 'range'): their "
              "numbers measure different things. Measure both with the same replay_mode");
  }
  EXPECT_NO_THROW(compare(make({"n"}, {{"k", {16}, "t", "ns", around(100)}}, events),
                          make({"n"}, {{"k", {16}, "t", "ns", around(100)}}, events, range)));
}

TEST(Compare, DifferentGpuDriverOrClocksWarnAndFlagTheRows) {
  const Results base = make({"n"}, {{"k", {16}, "t", "ns", around(100), 1980},
                                    {"k", {32}, "t", "ns", around(200), 1980},
                                    {"k", {64}, "t", "ns", around(300), NAN}});
  SessionInfo other = h200();
  other.gpu = "NVIDIA H100 80GB HBM3";
  other.driver_version = "570.86.15";
  // 1980 -> 1939: 2.07% lower, beyond the 2% threshold; 1980 -> 1941: 1.97%, within it.
  const Results cand = make({"n"}, {{"k", {16}, "t", "ns", around(100), 1939},
                                    {"k", {32}, "t", "ns", around(200), 1941},
                                    {"k", {64}, "t", "ns", around(300), 1900}},
                            other);
  const Comparison c = compare(base, cand);
  ASSERT_EQ(c.warnings.size(), 3u);
  EXPECT_EQ(c.warnings[0], "the GPUs differ (baseline NVIDIA H200, candidate NVIDIA H100 80GB HBM3): a verdict "
                           "may reflect the hardware, not the code (rows flagged gpu)");
  EXPECT_EQ(c.warnings[1], "the NVIDIA drivers differ (baseline 580.65.06, candidate 570.86.15): a driver can change "
                           "kernel timings (rows flagged driver)");
  EXPECT_EQ(c.warnings[2],
            "observed SM clocks differ by more than the threshold (2%) in 1 of 3 rows (largest: 1980 vs 1939 MHz, k "
            "t): a compute-bound kernel's duration scales with 1/clock, so the clocks alone can explain a verdict; "
            "lock them on both sides (ClockControl::base) (rows flagged sm_clock)");
  EXPECT_EQ(c.rows[0].flags, (std::vector<std::string>{"gpu", "driver", "sm_clock"}));
  EXPECT_EQ(c.rows[1].flags, (std::vector<std::string>{"gpu", "driver"}));
  EXPECT_EQ(c.rows[2].flags, (std::vector<std::string>{"gpu", "driver"}));  // clocks unknown: no flag
  const Table t = c.to_table();
  EXPECT_EQ(std::get<std::string>(t.rows[0][t.column("Flags")]), "gpu,driver,sm_clock");

  // The same model and driver, or one side not knowing them, warn about nothing.
  SessionInfo unknown = h200();
  unknown.driver_version.clear();
  EXPECT_TRUE(compare(base, make({"n"}, {{"k", {16}, "t", "ns", around(100), 1980}}, unknown)).rows[0].flags.empty());
}

TEST(Compare, DirectionComesFromTheMetricOrTheOptions) {
  // A derived bandwidth that fell by 10% is slower; a count of bytes that changed is changed.
  const Results base = make({}, {{"k", {}, "bandwidth", "GB/s", around(900)},
                                 {"k", {}, "dram__bytes_read.sum", "byte", around(4096)}});
  const Results cand = make({}, {{"k", {}, "bandwidth", "GB/s", around(810)},
                                 {"k", {}, "dram__bytes_read.sum", "byte", around(8192)}});
  Comparison c = compare(base, cand);
  EXPECT_EQ(row_of(c, "k", "bandwidth").direction, MetricDirection::higher_is_better);
  EXPECT_EQ(row_of(c, "k", "bandwidth").verdict, Verdict::slower);
  EXPECT_EQ(row_of(c, "k", "dram__bytes_read.sum").verdict, Verdict::changed);

  CompareOptions options;
  options.directions = {{"dram__bytes_read.sum", MetricDirection::lower_is_better},
                        {"bandwidth", MetricDirection::lower_is_better}};
  c = compare(base, cand, options);
  EXPECT_EQ(row_of(c, "k", "bandwidth").verdict, Verdict::faster);
  EXPECT_EQ(row_of(c, "k", "dram__bytes_read.sum").direction, MetricDirection::lower_is_better);
  EXPECT_EQ(row_of(c, "k", "dram__bytes_read.sum").verdict, Verdict::slower);

  options.directions = {{"bandwidht", MetricDirection::higher_is_better}};
  try {
    compare(base, cand, options);
    FAIL() << "a misspelt metric was accepted";
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()), "CompareOptions::directions names metric 'bandwidht', which neither result "
                                     "holds; closest metrics: 'bandwidth', 'dram__bytes_read.sum'");
  }
}

TEST(Compare, ThrottledRunsLeftOutOfTheStatisticsAreLeftOutHere) {
  // Two slow throttled runs among 10: kept, they widen the baseline; excluded, they are not seen.
  std::vector<double> values = around(1000);
  values[3] = values[7] = 5000;
  const std::vector<bool> throttled{false, false, false, true, false, false, false, true, false, false};
  Settings exclude;
  exclude.throttled_runs = ThrottledRuns::exclude;
  const Results kept = make({}, {{"k", {}, "t", "ns", values, 1980, throttled}});
  const Results excluded = make({}, {{"k", {}, "t", "ns", values, 1980, throttled}}, h200(), exclude);
  const Results cand = make({}, {{"k", {}, "t", "ns", around(1000)}});
  EXPECT_EQ(compare(kept, cand).rows[0].baseline.count, 10u);
  EXPECT_EQ(compare(kept, cand).rows[0].verdict, Verdict::unstable);  // RSD far above 10%
  EXPECT_EQ(compare(excluded, cand).rows[0].baseline.count, 8u);
  EXPECT_EQ(compare(excluded, cand).rows[0].verdict, Verdict::same);
}

TEST(Compare, DifferentUnitsCannotBeJudged) {
  const Results base = make({}, {{"k", {}, "bandwidth", "GB/s", around(900)}});
  const Results cand = make({}, {{"k", {}, "bandwidth", "TB/s", around(0.9)}});
  const ComparisonRow r = compare(base, cand).rows[0];
  EXPECT_EQ(r.verdict, Verdict::unstable);
  EXPECT_EQ(r.reason, "units differ (baseline 'GB/s', candidate 'TB/s'): the values cannot be compared");
  EXPECT_TRUE(std::isnan(r.ratio));
}

TEST(Compare, TableHasTheDocumentedColumns) {
  const Results base = make({"n"}, {{"k", {16}, "t", "ns", around(100)}, {"k", {32}, "t", "ns", around(100)}});
  const Results cand = make({"n"}, {{"k", {16}, "t", "ns", around(110)}});
  const Table t = compare(base, cand).to_table();
  EXPECT_EQ(t.columns, (std::vector<std::string>{
                           "Annotation", "n", "Metric", "Unit", "Direction", "BaselineMedian", "CandidateMedian",
                           "BaselineMean", "CandidateMean", "BaselineRuns", "CandidateRuns", "BaselineRSDPct",
                           "CandidateRSDPct", "Ratio", "CI_Lower", "CI_Upper", "CI_Method", "U", "PValue",
                           "UTestMethod", "CyclesRatio", "CyclesCI_Lower", "CyclesCI_Upper", "CyclesPValue",
                           "Verdict", "Reason", "Flags"}));
  ASSERT_EQ(t.rows.size(), 2u);
  EXPECT_EQ(std::get<std::int64_t>(t.rows[0][t.column("n")]), 16);
  EXPECT_EQ(std::get<std::string>(t.rows[0][t.column("Direction")]), "lower is better");
  EXPECT_EQ(std::get<std::string>(t.rows[0][t.column("Verdict")]), "slower");
  EXPECT_EQ(std::get<std::string>(t.rows[0][t.column("CI_Method")]),
            "percentile bootstrap, 95%, 2000 resamples, seed 5489");
  EXPECT_EQ(std::get<std::int64_t>(t.rows[0][t.column("CandidateRuns")]), 10);
  EXPECT_EQ(std::get<std::string>(t.rows[1][t.column("Verdict")]), "only_in_baseline");
  EXPECT_TRUE(std::holds_alternative<std::monostate>(t.rows[1][t.column("CandidateMedian")]));
  EXPECT_TRUE(std::holds_alternative<std::monostate>(t.rows[1][t.column("CI_Method")]));
}

TEST(Compare, OptionsAreNamedInTheCallersLanguage) {
  const Results r = make({}, {{"k", {}, "t", "ns", around(100)}});
  const auto message = [&](detail::Caller caller, CompareOptions options) {
    detail::set_caller(caller);
    std::string text;
    try {
      compare(r, r, options);
    } catch (const ConfigError& e) {
      text = e.what();
    }
    detail::set_caller(detail::Caller::cpp);
    return text;
  };
  EXPECT_EQ(message(detail::Caller::cpp, {.threshold_pct = 150}),
            "CompareOptions::threshold_pct must be a percentage from 0 up to (not including) 100, got 150 (the "
            "default is 2)");
  EXPECT_EQ(message(detail::Caller::python, {.threshold_pct = 150}),
            "threshold_pct must be a percentage from 0 up to (not including) 100, got 150 (the default is 2)");
  EXPECT_EQ(message(detail::Caller::command_line, {.threshold_pct = 150}),
            "--threshold must be a percentage from 0 up to (not including) 100, got 150 (the default is 2)");
  EXPECT_EQ(message(detail::Caller::command_line, {.min_samples = 0}),
            "--min-samples is 0; at least one valid value per side is needed (the default is 5)");
}

TEST(Compare, AChangeInTimeThatTheClocksExplainIsAmbiguous) {
  // The candidate ran 10% longer at 1755 MHz instead of 1980: in cycles it is 2.5% shorter.
  const Results base = make({}, {{"k", {}, "t", "ns", around(1000), 1980}});
  const Results slowed = make({}, {{"k", {}, "t", "ns", around(1100), 1755}});
  const Comparison c = compare(base, slowed);
  const ComparisonRow& r = c.rows.at(0);
  EXPECT_EQ(r.verdict, Verdict::ambiguous) << r.reason;
  EXPECT_NEAR(r.cycles_ratio, 1.1 * 1755 / 1980, 1e-9);
  EXPECT_LT(r.cycles_ci_upper, 1);
  EXPECT_EQ(r.reason.rfind("in time median +10.0% (95% CI ", 0), 0u) << r.reason;
  EXPECT_NE(r.reason.find("but in cycles (duration \u00d7 SM clock) -2.5% (95% CI "), std::string::npos) << r.reason;
  EXPECT_NE(r.reason.find("the SM clocks differ (median 1980 MHz in the baseline, 1755 MHz in the candidate) and can "
                          "explain it; lock the clocks on both sides (ClockControl::base)"),
            std::string::npos)
      << r.reason;
  EXPECT_EQ(c.gate(), Gate::passed);
  ASSERT_FALSE(c.warnings.empty());
  EXPECT_EQ(c.warnings.back().rfind("1 row changed in time but not in cycles (verdict ambiguous)", 0), 0u);
  const Table t = c.to_table();
  EXPECT_EQ(std::get<std::string>(t.rows[0][t.column("Verdict")]), "ambiguous");
  EXPECT_NEAR(std::get<double>(t.rows[0][t.column("CyclesRatio")]), 0.975, 1e-9);

  // Slower in cycles too: slower, and the reason gives both.
  const ComparisonRow& real = compare(base, make({}, {{"k", {}, "t", "ns", around(1200), 1900}})).rows.at(0);
  EXPECT_EQ(real.verdict, Verdict::slower) << real.reason;
  EXPECT_NE(real.reason.find("; in cycles (duration \u00d7 SM clock) +15.2% ("), std::string::npos) << real.reason;
  // The same clocks on both sides: time alone decides, and no cycles are shown.
  const ComparisonRow& steady = compare(base, make({}, {{"k", {}, "t", "ns", around(1100), 1980}})).rows.at(0);
  EXPECT_EQ(steady.verdict, Verdict::slower);
  EXPECT_TRUE(std::isnan(steady.cycles_ratio));
  // Counts of work are never confirmed in cycles: only durations scale with the clock.
  const ComparisonRow& bytes =
      compare(make({}, {{"k", {}, "b", "byte", around(1000), 1980}}), make({}, {{"k", {}, "b", "byte", around(1100), 1755}}))
          .rows.at(0);
  EXPECT_EQ(bytes.verdict, Verdict::changed);
}

TEST(Compare, ASideWithTooFewSamplesCannotBeJudgedAndTheGateSaysSo) {
  // Results of runs = 1: one sample a side.
  const Results one = make({"n"}, {{"k", {16}, "t", "ns", {1000}}, {"k", {32}, "t", "ns", around(1000)}});
  const Results other = make({"n"}, {{"k", {16}, "t", "ns", {1500}}, {"k", {32}, "t", "ns", around(1000)}});
  Comparison c = compare(one, other);
  EXPECT_EQ(c.rows[0].verdict, Verdict::too_few_samples);
  EXPECT_EQ(c.rows[0].reason, "baseline has 1 valid value, fewer than CompareOptions::min_samples (5)");
  EXPECT_EQ(c.rows[1].verdict, Verdict::same);
  EXPECT_EQ(c.gate(), Gate::cannot_judge);
  EXPECT_EQ(to_string(c.gate()), "cannot_judge");
  ASSERT_EQ(c.warnings.size(), 1u);
  EXPECT_EQ(c.warnings[0], "1 row cannot be judged (verdict too_few_samples): 1 row with fewer than "
                           "CompareOptions::min_samples (5) runs on a side (results of Settings::runs = 1 have one): "
                           "measure both sides with at least 5 runs");
  // A slower row fails the gate whatever else cannot be judged.
  const Results slower = make({"n"}, {{"k", {16}, "t", "ns", {1500}}, {"k", {32}, "t", "ns", around(1200)}});
  EXPECT_EQ(compare(one, slower).gate(), Gate::slower);
  // Rows on one side only are not rows that could not be judged.
  EXPECT_EQ(compare(make({"n"}, {{"k", {32}, "t", "ns", around(1000)}}), one).gate(), Gate::passed);
}

// With min_samples lowered to 1, runs = 1 called a 2x slowdown `same` and passed the gate: one value
// a side can never make the U test significant. Six runs of NaN were told to measure 5 runs.
TEST(Compare, TooFewValuesForTheUTestOrOnlyNaNAreToldApart) {
  const Results once = make({}, {{"k", {}, "t", "ns", {1000}}});
  const Results twice_as_slow = make({}, {{"k", {}, "t", "ns", {2000}}});
  CompareOptions lowered;
  lowered.min_samples = 1;
  const Comparison c = compare(once, twice_as_slow, lowered);
  EXPECT_EQ(c.rows[0].verdict, Verdict::too_few_samples);
  EXPECT_EQ(c.rows[0].reason, "with 1 and 1 valid values the U test cannot reach p < CompareOptions::alpha (0.05): "
                              "its smallest p is 1, so no change could be shown; measure each side at least 4 times");
  EXPECT_EQ(c.gate(), Gate::cannot_judge);
  ASSERT_EQ(c.warnings.size(), 1u);
  EXPECT_EQ(c.warnings[0], "1 row cannot be judged (verdict too_few_samples): 1 row with too few values for the U "
                           "test to reach p < CompareOptions::alpha (0.05) at all: measure both sides at least 4 times");
  // Four a side can: a clear change is judged.
  EXPECT_EQ(compare(make({}, {{"k", {}, "t", "ns", around(1000, 4)}}), make({}, {{"k", {}, "t", "ns", around(2000, 4)}}),
                    lowered).rows[0].verdict,
            Verdict::slower);

  const double nan = std::numeric_limits<double>::quiet_NaN();
  const Results failed = make({}, {{"k", {}, "t", "ns", std::vector<double>(6, nan)}});
  const Comparison n = compare(failed, make({}, {{"k", {}, "t", "ns", around(1000, 6)}}));
  EXPECT_EQ(n.rows[0].reason, "baseline has 0 valid values of 6 (6 NaN: runs that failed or recorded nothing), fewer "
                              "than CompareOptions::min_samples (5)");
  EXPECT_EQ(n.rows[0].baseline.measured, 6u);
  EXPECT_EQ(n.warnings[0], "1 row cannot be judged (verdict too_few_samples): 1 row with NaN values on a side (runs "
                           "that failed or recorded nothing) leaving fewer than 5 valid values: more runs will not "
                           "help; find why in those rows' samples");
}

// An evaluation's measurements against a profile's were refused as taken "with different
// replay_mode": they are different kinds of results, whose rows never match.
TEST(Compare, AnEvaluationAgainstAProfileIsRefusedAsSuch) {
  Settings range;
  range.replay_mode = ReplayMode::range;
  const Results evaluation = make({"n"}, {{"candidate", {1}, "t", "ns", around(500)},
                                          {"reference", {1}, "t", "ns", around(1000)}}, h200(), range);
  const Results profile = make({"n"}, {{"gemm", {1}, "t", "ns", around(500)}});
  EXPECT_EQ(refusal(evaluation, profile),
            "compare() cannot match an evaluation with a profile: the baseline holds an evaluation's measurements "
            "(its candidate and reference calls, each timed as one range), the candidate a profile's (annotations "
            "'gemm'), so no row is measured on both sides. Compare an evaluation with another evaluation "
            "(Evaluation::measurements() on both sides), and a profile with a profile");
  EXPECT_EQ(compare(evaluation, evaluation).gate(), Gate::passed);
}

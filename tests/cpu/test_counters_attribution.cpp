// How the counter backend turns range-profiler ranges into per-run, per-region kernel measurements,
// how large a batch's counter data image is, and the Speed-of-Light summary: pure logic, no GPU.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>

#include "backends/counters/batch_image.hpp"
#include "backends/counters/range_attribution.hpp"
#include "kscope/errors.hpp"
#include "kscope/metrics.hpp"

using namespace kscope;
using counters::Launch;
using counters::RangeResult;

namespace {

// One run's launches, in a batch of one.
Launch in_region(std::ptrdiff_t region, const std::string& kernel, std::size_t run = 0) {
  return {run, region, kernel, false, false};
}
Launch flush_of(std::size_t run) { return {run, -1, "L2 flush", false, true}; }

}  // namespace

TEST(CounterAttribution, AutoRangesFollowLaunchOrderAndSkipUnannotatedKernels) {
  const std::vector<Launch> launches{in_region(0, "a"), in_region(-1, "setup"), in_region(1, "b"), in_region(1, "c")};
  // CUPTI may hand the ranges back in any order; their names are the launch indices.
  const std::vector<RangeResult> ranges{{"2", {20, 2}}, {"0", {10, 1}}, {"1", {99, 9}}, {"3", {30, 3}}};
  const auto runs = counters::attribute_kernel_ranges(launches, ranges, {2});
  ASSERT_EQ(runs.size(), 1u);
  const auto& m = runs[0];
  ASSERT_EQ(m.size(), 2u);
  ASSERT_EQ(m[0].size(), 1u);
  EXPECT_EQ(m[0][0].name, "a");
  EXPECT_EQ(m[0][0].values, (std::vector<double>{10, 1}));
  ASSERT_EQ(m[1].size(), 2u);
  EXPECT_EQ(m[1][0].name, "b");
  EXPECT_EQ(m[1][0].values, (std::vector<double>{20, 2}));
  EXPECT_EQ(m[1][1].name, "c");
}

TEST(CounterAttribution, AutoRangeNumbersMayStartAtOne) {
  // What CUPTI 13.0 returned on the H200: ranges "1", "2", ... for the launches in order.
  const std::vector<Launch> launches{in_region(0, "a"), in_region(0, "b")};
  const auto m = counters::attribute_kernel_ranges(launches, {{"2", {20}}, {"1", {10}}}, {1}).at(0);
  ASSERT_EQ(m[0].size(), 2u);
  EXPECT_EQ(m[0][0].values, std::vector<double>{10});
  EXPECT_EQ(m[0][1].values, std::vector<double>{20});
  EXPECT_THROW(counters::attribute_kernel_ranges(launches, {{"1", {1}}, {"1", {2}}}, {1}), InternalError);
}

TEST(CounterAttribution, FlushesBetweenRegionsAreSkippedWhetherOrNotCuptiMeasuredThem) {
  const std::vector<Launch> launches{in_region(0, "a"), flush_of(0), in_region(1, "b")};
  const auto without = counters::attribute_kernel_ranges(launches, {{"0", {1}}, {"1", {2}}}, {2}).at(0);
  EXPECT_EQ(without[1].at(0).values, std::vector<double>{2});
  const auto with = counters::attribute_kernel_ranges(launches, {{"0", {1}}, {"1", {7}}, {"2", {2}}}, {2}).at(0);
  ASSERT_EQ(with[0].size(), 1u);
  EXPECT_EQ(with[1].at(0).name, "b");
  EXPECT_EQ(with[1].at(0).values, std::vector<double>{2});
}

TEST(CounterAttribution, EachKernelGetsTheLaunchMetricsOfItsOwnLaunch) {
  Launch small{0, 0, "small", false, false, {{1, 1, 1}, {32, 1, 1}, 0}};
  Launch big{0, 0, "big", false, false, {{528, 1, 1}, {256, 1, 1}, 1024}};
  const counters::MetricLayout layout({"launch__grid_size", "gpu__time_duration.sum", "launch__thread_count"}, 132);
  const auto m = counters::attribute_kernel_ranges({small, in_region(-1, "outside"), big},
                                                   {{"1", {5}}, {"2", {6}}, {"3", {700}}}, {1}, layout)
                     .at(0);
  ASSERT_EQ(m[0].size(), 2u);
  EXPECT_EQ(m[0][0].values, (std::vector<double>{1, 5, 32}));
  EXPECT_EQ(m[0][1].values, (std::vector<double>{528, 700, 528 * 256}));
}

TEST(CounterAttribution, AutoRangesMustMatchTheLaunches) {
  const std::vector<Launch> launches{in_region(0, "a"), in_region(0, "b")};
  EXPECT_THROW(counters::attribute_kernel_ranges(launches, {{"0", {1}}}, {1}), BackendError);
  EXPECT_THROW(counters::attribute_kernel_ranges(launches, {{"0", {1}}, {"range", {2}}}, {1}), InternalError);
  try {
    counters::attribute_kernel_ranges({{0, 0, "CUDA graph", true, false}}, {}, {1});
    FAIL() << "a graph launch was accepted in kernel mode";
  } catch (const BackendError& e) {
    EXPECT_NE(std::string(e.what()).find("ReplayMode::range"), std::string::npos) << e.what();
  }
}

TEST(CounterAttribution, AGraphLaunchInARegionIsRefusedByNameBeforeTheRangeProfilerStops) {
  // The backend checks each run's launches as it ends, before CUPTI's stop fails with an unknown error.
  EXPECT_NO_THROW(counters::refuse_graph_launches({in_region(0, "a"), {0, -1, "CUDA graph", true, false}}));
  try {
    counters::refuse_graph_launches({in_region(0, "a"), {0, 1, "CUDA graph", true, false}});
    FAIL() << "a graph launch in a region was accepted for kernel replay";
  } catch (const BackendError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("kernel replay cannot replay a CUDA graph launch (region 1"), std::string::npos) << what;
    EXPECT_NE(what.find("ReplayMode::range"), std::string::npos) << what;
  }
}

// A pass spanning a batch of three runs, each flushing before its one region, with a setup kernel
// before the region in run 1 only: the ranges are numbered across the whole pass. A flush is one
// record, whatever number of ranges CUPTI gave it (none for the graph launch kscope makes, two when
// its memset and discard kernel were launched directly): the count tells.
TEST(CounterAttribution, AutoRangesOfABatchGoToTheRunThatLaunchedThem) {
  std::vector<Launch> launches;
  for (std::size_t run = 0; run < 3; ++run) {
    launches.push_back(flush_of(run));
    if (run == 1) launches.push_back(in_region(-1, "setup", run));
    launches.push_back(in_region(0, "k", run));
  }
  // ranges per flush -> the kernel's range in each run (numbered from 1, as on the H200)
  const std::vector<std::pair<std::size_t, std::vector<double>>> cases{
      {0, {0, 200, 300}}, {1, {100, 400, 600}}, {2, {200, 600, 900}}};
  for (const auto& [per_flush, expected] : cases) {
    std::vector<RangeResult> ranges;
    for (std::size_t i = 0; i < 4 + 3 * per_flush; ++i) ranges.push_back({std::to_string(i + 1), {100.0 * i}});
    const auto runs = counters::attribute_kernel_ranges(launches, ranges, {1, 1, 1});
    ASSERT_EQ(runs.size(), 3u);
    for (std::size_t run = 0; run < 3; ++run) {
      ASSERT_EQ(runs[run].size(), 1u);
      ASSERT_EQ(runs[run][0].size(), 1u) << "run " << run;
      EXPECT_EQ(runs[run][0][0].name, "k");
      EXPECT_EQ(runs[run][0][0].values, std::vector<double>{expected[run]}) << per_flush << " per flush, run " << run;
    }
  }
  // A count that no number of ranges per flush explains: the kernels cannot be matched.
  std::vector<RangeResult> five;
  for (std::size_t i = 0; i < 5; ++i) five.push_back({std::to_string(i + 1), {1.0}});
  EXPECT_THROW(counters::attribute_kernel_ranges(launches, five, {1, 1, 1}), BackendError);
}

TEST(CounterAttribution, RunsOfABatchMayOpenDifferentRegions) {
  // Run 0 opened two regions, run 1 none, run 2 one: each run's measurement has its own regions.
  const std::vector<Launch> launches{in_region(0, "a", 0), in_region(1, "b", 0), in_region(-1, "x", 1),
                                     in_region(0, "c", 2)};
  const auto runs = counters::attribute_kernel_ranges(launches, {{"0", {1}}, {"1", {2}}, {"2", {3}}, {"3", {4}}},
                                                      {2, 0, 1});
  ASSERT_EQ(runs.size(), 3u);
  EXPECT_EQ(runs[0].size(), 2u);
  EXPECT_EQ(runs[0][1].at(0).values, std::vector<double>{2});
  EXPECT_TRUE(runs[1].empty());
  EXPECT_EQ(runs[2].at(0).at(0).values, std::vector<double>{4});
  // A launch of a run or region the batch does not have is a kscope bug.
  EXPECT_THROW(counters::attribute_kernel_ranges({in_region(0, "a", 3)}, {{"0", {1}}}, {1, 1, 1}), InternalError);
  EXPECT_THROW(counters::attribute_kernel_ranges({in_region(1, "a", 2)}, {{"0", {1}}}, {1, 1, 1}), InternalError);
}

TEST(CounterAttribution, UserRangesGiveOneMeasurementPerRegionNamedByItsKernels) {
  const std::vector<Launch> launches{in_region(0, "a"), in_region(0, "b"), in_region(-1, "x"),
                                     {0, 2, "CUDA graph", true, false}};
  const std::vector<RangeResult> ranges{{"0:0", {5}}, {"0:1", {6}}, {"0:2", {7}}};
  const auto m = counters::attribute_user_ranges(launches, ranges, {3}).at(0);
  ASSERT_EQ(m.size(), 3u);
  ASSERT_EQ(m[0].size(), 1u);
  EXPECT_EQ(m[0][0].name, "a|b");
  EXPECT_EQ(m[0][0].values, std::vector<double>{5});
  EXPECT_TRUE(m[1].empty());  // launched nothing: the engine reports the empty region
  ASSERT_EQ(m[2].size(), 1u);
  EXPECT_EQ(m[2][0].name, "CUDA graph");
}

TEST(CounterAttribution, UserRangesOfABatchNameTheirRunAndRegion) {
  EXPECT_EQ(counters::user_range_name(12, 3), "12:3");
  std::vector<Launch> launches;
  for (std::size_t run = 0; run < 3; ++run) {
    launches.push_back(in_region(0, "a", run));
    launches.push_back(in_region(1, "b", run));
  }
  // In any order, as CUPTI may return them.
  std::vector<RangeResult> ranges;
  for (std::size_t run = 3; run-- > 0;)
    for (std::size_t region = 0; region < 2; ++region)
      ranges.push_back({counters::user_range_name(run, region), {10.0 * run + region}});
  const auto runs = counters::attribute_user_ranges(launches, ranges, {2, 2, 2});
  ASSERT_EQ(runs.size(), 3u);
  for (std::size_t run = 0; run < 3; ++run) {
    EXPECT_EQ(runs[run].at(0).at(0).name, "a");
    EXPECT_EQ(runs[run].at(0).at(0).values, std::vector<double>{10.0 * run});
    EXPECT_EQ(runs[run].at(1).at(0).values, std::vector<double>{10.0 * run + 1});
  }
  // A name that is not "run:region" of this batch is a kscope bug.
  for (const char* bad : {"1", "1:", ":1", "3:0", "0:2", "a:b", "0:1:2"})
    EXPECT_THROW(counters::attribute_user_ranges(launches, {{bad, {1}}}, {2, 2, 2}), InternalError) << bad;
}

TEST(CounterAttribution, EveryPassMustRepeatTheFirstPassLaunches) {
  const std::vector<Launch> first{in_region(0, "a"), in_region(1, "b")};
  EXPECT_NO_THROW(counters::check_same_launches(first, first, 2));
  try {
    counters::check_same_launches(first, {in_region(0, "a")}, 3);
    FAIL() << "a pass with fewer launches was accepted";
  } catch (const AnnotationError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("replay pass 3"), std::string::npos) << m;
    EXPECT_NE(m.find("'b' in region 1"), std::string::npos) << m;
  }
  EXPECT_THROW(counters::check_same_launches(first, {in_region(0, "a"), in_region(0, "b")}, 2), AnnotationError);
}

TEST(CounterAttribution, EachRunOfABatchIsComparedWithItsOwnFirstPass) {
  const std::vector<Launch> pass1{in_region(0, "a", 0), in_region(0, "b", 1), in_region(0, "c", 2)};
  EXPECT_EQ(counters::launches_of(pass1, 1).size(), 1u);
  EXPECT_EQ(counters::launches_of(pass1, 1).at(0).kernel, "b");
  EXPECT_TRUE(counters::launches_of(pass1, 3).empty());
  // Run 1 launches b again in pass 2: the same, although run 0 launched a.
  EXPECT_NO_THROW(counters::check_same_launches(counters::launches_of(pass1, 1), {in_region(0, "b", 1)}, 2));
  EXPECT_THROW(counters::check_same_launches(counters::launches_of(pass1, 1), {in_region(0, "a", 1)}, 2),
               AnnotationError);
}

// --- The batch's counter data image -------------------------------------------------------------

using counters::BatchImage;

// CUPTI's sizes for 5 metrics in 8 passes on the H200: 10,563,860 bytes for 16 ranges, 337,929,812
// for 512.
constexpr std::size_t kSolFixed = 3668, kSolPerRange = 660012;

TEST(CounterBatchImage, TheMemoryBoundLimitsTheRangesOfAPass) {
  const BatchImage sol(kSolFixed, kSolPerRange);
  EXPECT_EQ(sol.max_ranges(), (BatchImage::kMaxImageBytes - kSolFixed) / kSolPerRange);  // 406
  EXPECT_LE(kSolFixed + sol.max_ranges() * kSolPerRange, BatchImage::kMaxImageBytes);
  // A one-metric set's ranges are small: the pass limit of 512 ranges decides.
  EXPECT_EQ(BatchImage(2000, 20000).max_ranges(), BatchImage::kMaxRanges);
  // A range larger than the bound: still one.
  EXPECT_EQ(BatchImage(0, BatchImage::kMaxImageBytes * 2).max_ranges(), 1u);
}

TEST(CounterBatchImage, RunsPerBatchFollowTheRangesTheLastBatchFound) {
  BatchImage sol(kSolFixed, kSolPerRange);
  // Before any batch: two ranges per run (a kernel and its flush).
  EXPECT_EQ(sol.max_runs(), 406u / 2);
  EXPECT_EQ(sol.ranges_for(51), 102u);
  EXPECT_EQ(sol.ranges_for(1000), 406u);
  sol.expect(3);  // a flush and two kernels per run
  EXPECT_EQ(sol.max_runs(), 135u);
  EXPECT_EQ(sol.ranges_for(51), 153u);
  sol.expect(300);  // more than half the bound: one run per batch
  EXPECT_EQ(sol.max_runs(), 1u);
  EXPECT_EQ(sol.ranges_for(4), 406u);
  sol.expect(450);  // more than the bound: one run still fits
  EXPECT_EQ(sol.max_runs(), 1u);
  EXPECT_EQ(sol.ranges_for(1), 450u);
  sol.expect(900);  // past the pass limit: the image stops there (CUPTI reports the rest as dropped)
  EXPECT_EQ(sol.ranges_for(1), BatchImage::kMaxRanges);
}

TEST(CounterBatchImage, AFirstPassTakesRunsWhileAnotherFitsAndGrowsAnImageTooSmall) {
  const BatchImage sol(kSolFixed, kSolPerRange);
  EXPECT_TRUE(sol.has_room(400, 6));
  EXPECT_FALSE(sol.has_room(401, 6));
  EXPECT_EQ(sol.grown(150, 204), 0u);    // fits
  EXPECT_EQ(sol.grown(240, 204), 240u);  // more ranges per run than the last batch's: grows to them
  EXPECT_EQ(sol.grown(700, 300), BatchImage::kMaxRanges);
  EXPECT_EQ(sol.grown(700, BatchImage::kMaxRanges), 0u);  // nothing larger helps: CUPTI drops the rest
}

TEST(SpeedOfLight, BottleneckRule) {
  EXPECT_EQ(classify_bottleneck(92, 30), Bottleneck::compute_bound);
  EXPECT_EQ(classify_bottleneck(20, 85), Bottleneck::memory_bound);
  EXPECT_EQ(classify_bottleneck(70, 65), Bottleneck::compute_bound);   // both busy: the higher decides
  EXPECT_EQ(classify_bottleneck(61, 75), Bottleneck::memory_bound);
  EXPECT_EQ(classify_bottleneck(59.9, 40), Bottleneck::latency_bound);  // neither reaches 60%
  EXPECT_EQ(classify_bottleneck(60, 10), Bottleneck::compute_bound);
  EXPECT_EQ(to_string(Bottleneck::latency_bound), "latency-bound");
  EXPECT_NE(bottleneck_rule().find("60%"), std::string::npos);
  EXPECT_EQ(sol_metrics().size(), 4u);
}

namespace {

SummaryRow row(const std::string& annotation, std::size_t config, const std::string& metric, double mean) {
  SummaryRow r{};
  r.annotation = annotation;
  r.config_index = config;
  r.metric = metric;
  r.unit = "percent";
  r.stats.mean = mean;
  r.stats.count = 3;
  r.avg_value = mean / 2;  // as if normalized: speed_of_light must use the mean
  r.normalization_value = NAN;
  r.geomean = NAN;
  r.kernel = annotation + "_kernel";
  return r;
}

Results sol_results(bool with_memory) {
  auto names = std::make_shared<const std::vector<std::string>>(std::vector<std::string>{"n"});
  std::vector<Config> configs{Config(names, {Value(std::int64_t{16})}, 0), Config(names, {Value(std::int64_t{32})}, 1)};
  const std::string compute = "sm__throughput.avg.pct_of_peak_sustained_elapsed";
  const std::string memory = "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed";
  std::vector<SummaryRow> rows{row("copy", 0, "gpu__time_duration.sum", 1000), row("copy", 0, compute, 15),
                               row("fma", 0, compute, 95), row("copy", 1, compute, 20),
                               row("copy", 1, "gpu__time_duration.sum", NAN)};
  if (with_memory) {
    rows.push_back(row("copy", 0, memory, 88));
    rows.push_back(row("fma", 0, memory, 12));
    rows.push_back(row("copy", 1, memory, 30));
  }
  SessionInfo session;
  session.backend = Backend::counters;
  return Results(session, configs, rows, {});
}

}  // namespace

TEST(SpeedOfLight, OneRowPerAnnotationAndConfigWithItsBottleneck) {
  const Table t = speed_of_light(sol_results(true));
  const std::vector<std::string> columns{"Annotation", "n", "Kernel", "DurationNs", "ComputeThroughputPct",
                                         "MemoryThroughputPct", "Bottleneck"};
  EXPECT_EQ(t.columns, columns);
  ASSERT_EQ(t.rows.size(), 3u);
  EXPECT_EQ(std::get<std::string>(t.rows[0][0]), "copy");
  EXPECT_EQ(std::get<std::int64_t>(t.rows[0][1]), 16);
  EXPECT_EQ(std::get<std::string>(t.rows[0][2]), "copy_kernel");
  EXPECT_DOUBLE_EQ(std::get<double>(t.rows[0][3]), 1000);
  EXPECT_DOUBLE_EQ(std::get<double>(t.rows[0][5]), 88);
  EXPECT_EQ(std::get<std::string>(t.rows[0][6]), "memory-bound");
  EXPECT_EQ(std::get<std::string>(t.rows[1][6]), "compute-bound");  // fma, n=16
  EXPECT_EQ(std::get<std::int64_t>(t.rows[2][1]), 32);
  EXPECT_TRUE(std::holds_alternative<std::monostate>(t.rows[2][3]));  // NaN duration
  EXPECT_EQ(std::get<std::string>(t.rows[2][6]), "latency-bound");
}

TEST(SpeedOfLight, RefusesResultsWithoutTheThroughputs) {
  try {
    speed_of_light(sol_results(false));
    FAIL() << "results without the memory throughput were accepted";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("sol_metrics()"), std::string::npos) << e.what();
  }
}

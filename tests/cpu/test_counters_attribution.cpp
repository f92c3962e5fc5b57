// How the counter backend turns range-profiler ranges into per-region kernel measurements, and
// the Speed-of-Light summary: pure logic, no GPU.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>

#include "backends/counters/range_attribution.hpp"
#include "kscope/errors.hpp"
#include "kscope/metrics.hpp"

using namespace kscope;
using counters::Launch;
using counters::RangeResult;

TEST(CounterAttribution, AutoRangesFollowLaunchOrderAndSkipUnannotatedKernels) {
  const std::vector<Launch> launches{{0, "a", false}, {-1, "setup", false}, {1, "b", false}, {1, "c", false}};
  // CUPTI may hand the ranges back in any order; their names are the launch indices.
  const std::vector<RangeResult> ranges{{"2", {20, 2}}, {"0", {10, 1}}, {"1", {99, 9}}, {"3", {30, 3}}};
  const auto m = counters::attribute_kernel_ranges(launches, ranges, 2);
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
  const std::vector<Launch> launches{{0, "a", false}, {0, "b", false}};
  const auto m = counters::attribute_kernel_ranges(launches, {{"2", {20}}, {"1", {10}}}, 1);
  ASSERT_EQ(m[0].size(), 2u);
  EXPECT_EQ(m[0][0].values, std::vector<double>{10});
  EXPECT_EQ(m[0][1].values, std::vector<double>{20});
  EXPECT_THROW(counters::attribute_kernel_ranges(launches, {{"1", {1}}, {"1", {2}}}, 1), InternalError);
}

TEST(CounterAttribution, FlushesBetweenRegionsAreSkippedWhetherOrNotCuptiMeasuredThem) {
  const std::vector<Launch> launches{{0, "a", false, false}, {-1, "L2 flush", false, true}, {1, "b", false, false}};
  const auto without = counters::attribute_kernel_ranges(launches, {{"0", {1}}, {"1", {2}}}, 2);
  EXPECT_EQ(without[1].at(0).values, std::vector<double>{2});
  const auto with = counters::attribute_kernel_ranges(launches, {{"0", {1}}, {"1", {7}}, {"2", {2}}}, 2);
  ASSERT_EQ(with[0].size(), 1u);
  EXPECT_EQ(with[1].at(0).name, "b");
  EXPECT_EQ(with[1].at(0).values, std::vector<double>{2});
}

TEST(CounterAttribution, EachKernelGetsTheLaunchMetricsOfItsOwnLaunch) {
  Launch small{0, "small", false, false, {{1, 1, 1}, {32, 1, 1}, 0}};
  Launch big{0, "big", false, false, {{528, 1, 1}, {256, 1, 1}, 1024}};
  const counters::MetricLayout layout({"launch__grid_size", "gpu__time_duration.sum", "launch__thread_count"}, 132);
  const auto m = counters::attribute_kernel_ranges({small, {-1, "outside", false}, big},
                                                   {{"1", {5}}, {"2", {6}}, {"3", {700}}}, 1, layout);
  ASSERT_EQ(m[0].size(), 2u);
  EXPECT_EQ(m[0][0].values, (std::vector<double>{1, 5, 32}));
  EXPECT_EQ(m[0][1].values, (std::vector<double>{528, 700, 528 * 256}));
}

TEST(CounterAttribution, AutoRangesMustMatchTheLaunches) {
  const std::vector<Launch> launches{{0, "a", false}, {0, "b", false}};
  EXPECT_THROW(counters::attribute_kernel_ranges(launches, {{"0", {1}}}, 1), BackendError);
  EXPECT_THROW(counters::attribute_kernel_ranges(launches, {{"0", {1}}, {"range", {2}}}, 1), InternalError);
  try {
    counters::attribute_kernel_ranges({{0, "CUDA graph", true}}, {}, 1);
    FAIL() << "a graph launch was accepted in kernel mode";
  } catch (const BackendError& e) {
    EXPECT_NE(std::string(e.what()).find("ReplayMode::range"), std::string::npos) << e.what();
  }
}

TEST(CounterAttribution, UserRangesGiveOneMeasurementPerRegionNamedByItsKernels) {
  const std::vector<Launch> launches{{0, "a", false}, {0, "b", false}, {-1, "x", false}, {2, "CUDA graph", true}};
  const std::vector<RangeResult> ranges{{"0", {5}}, {"1", {6}}, {"2", {7}}};
  const auto m = counters::attribute_user_ranges(launches, ranges, 3);
  ASSERT_EQ(m.size(), 3u);
  ASSERT_EQ(m[0].size(), 1u);
  EXPECT_EQ(m[0][0].name, "a|b");
  EXPECT_EQ(m[0][0].values, std::vector<double>{5});
  EXPECT_TRUE(m[1].empty());  // launched nothing: the engine reports the empty region
  ASSERT_EQ(m[2].size(), 1u);
  EXPECT_EQ(m[2][0].name, "CUDA graph");
}

TEST(CounterAttribution, EveryPassMustRepeatTheFirstPassLaunches) {
  const std::vector<Launch> first{{0, "a", false}, {1, "b", false}};
  EXPECT_NO_THROW(counters::check_same_launches(first, first, 2));
  try {
    counters::check_same_launches(first, {{0, "a", false}}, 3);
    FAIL() << "a pass with fewer launches was accepted";
  } catch (const AnnotationError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("replay pass 3"), std::string::npos) << m;
    EXPECT_NE(m.find("'b' in region 1"), std::string::npos) << m;
  }
  EXPECT_THROW(counters::check_same_launches(first, {{0, "a", false}, {0, "b", false}}, 2), AnnotationError);
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
  session.backend = BackendId::counters;
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

// The counter backend's metric database on CUPTI's host API, offline with chip GH100 (H100/H200):
// validation with suggestions, units and pass planning. Skipped where the host API cannot start.
#include <gtest/gtest.h>

#include <algorithm>

#include "backends/counters/launch_metrics.hpp"
#include "backends/counters/metric_names.hpp"
#include "kscope/errors.hpp"
#include "kscope/metrics.hpp"

using namespace kscope;
using kscope::counters::split_metric_name;

namespace {

class HostApi : public ::testing::Test {
 protected:
  void SetUp() override {
    try {
      supported_chips();
    } catch (const std::exception& e) {
      GTEST_SKIP() << "CUPTI's profiler host API cannot start here (libcupti/libnvperf_host): " << e.what();
    }
  }
};

// The ConfigError text of describe_metric(name, "GH100").
std::string rejection(const std::string& name) {
  try {
    describe_metric(name, "GH100");
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "accepted";
}

}  // namespace

TEST(MetricNames, SplitAtTheFirstDotAfterTheFamily) {
  EXPECT_EQ(split_metric_name("dram__bytes_read.sum.per_second").base, "dram__bytes_read");
  EXPECT_EQ(split_metric_name("dram__bytes_read.sum.per_second").suffix, ".sum.per_second");
  EXPECT_EQ(split_metric_name("FBSP.TriageCompute.dramc__throughput.avg.pct_of_peak_sustained_elapsed").base,
            "FBSP.TriageCompute.dramc__throughput");
  EXPECT_EQ(split_metric_name("gpu__time_duration").suffix, "");
  EXPECT_EQ(split_metric_name("bogus.sum").base, "bogus");
}

TEST(MetricNames, NcuOnlyFamiliesAreExplained) {
  EXPECT_NE(counters::ncu_only_explanation("launch__grid_size").find("launch attribute"), std::string::npos);
  EXPECT_NE(counters::ncu_only_explanation("device__attribute_max_threads_per_block").find("device attribute"),
            std::string::npos);
  EXPECT_EQ(counters::ncu_only_explanation("dram__bytes_read.sum"), "");
}

TEST(MetricNames, SuggestionsMatchTheBaseThenTheSuffix) {
  const std::vector<std::string> bases{"dram__bytes_read", "dram__bytes_write", "sm__throughput"};
  const auto suffixes = [](const std::string& base) -> std::vector<std::string> {
    if (base == "sm__throughput") return {".avg.pct_of_peak_sustained_elapsed", ".max.pct_of_peak_sustained_active"};
    return {".sum", ".avg", ".sum.per_second"};
  };
  auto s = counters::suggest_metric_names("dram__byte_read.sum", bases, suffixes);
  ASSERT_FALSE(s.empty());
  EXPECT_EQ(s.front(), "dram__bytes_read.sum");
  s = counters::suggest_metric_names("sm__throughput.avg.pct_of_peak_sustained_elapsd", bases, suffixes);
  ASSERT_FALSE(s.empty());
  EXPECT_EQ(s.front(), "sm__throughput.avg.pct_of_peak_sustained_elapsed");
  EXPECT_LE(counters::suggest_metric_names("x", bases, suffixes, 2).size(), 2u);
}

TEST_F(HostApi, ChipNamesAreCaseInsensitiveAndChecked) {
  const auto chips = supported_chips();
  EXPECT_NE(std::find(chips.begin(), chips.end(), "GH100"), chips.end());
  EXPECT_EQ(describe_metric("gpu__time_duration.sum", "gh100").unit, "ns");
  try {
    describe_metric("gpu__time_duration.sum", "GH10");
    FAIL() << "an unknown chip was accepted";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("'GH100'"), std::string::npos) << e.what();
    // Issue 25: the one name of the command in every hint (pip installs no kscope-metrics).
    EXPECT_NE(std::string(e.what()).find("`kscope metrics --chips` lists them"), std::string::npos) << e.what();
  }
}

// Units as Nsight Compute reports them (its raw CSV, Nsight Python's Unit column), from the metric
// database's dimensional units.
TEST_F(HostApi, UnitsAreNsightComputesAndTypesComeFromTheMetricDatabase) {
  EXPECT_EQ(describe_metric("gpu__time_duration.sum", "GH100").unit, "ns");  // CUPTI: nanosecond
  EXPECT_EQ(describe_metric("dram__bytes_read.sum", "GH100").unit, "byte");
  EXPECT_EQ(describe_metric("dram__bytes_read.sum.per_second", "GH100").unit, "byte/s");  // as ncu prints it
  EXPECT_EQ(describe_metric("lts__t_sector_hit_rate.pct", "GH100").unit, "%");  // CUPTI: percent
  EXPECT_EQ(describe_metric("lts__t_sector_hit_rate.pct", "GH100").type, MetricType::ratio);
  const MetricInfo sm = describe_metric("sm__throughput.avg.pct_of_peak_sustained_elapsed", "GH100");
  EXPECT_EQ(sm.unit, "%");
  EXPECT_EQ(sm.type, MetricType::throughput);
  EXPECT_EQ(sm.hw_unit, "sm");
  EXPECT_EQ(sm.suffixes.size(), 8u);  // {avg,max,min,sum} x pct_of_peak_sustained_{active,elapsed}
  EXPECT_EQ(describe_metric("smsp__sass_thread_inst_executed_op_ffma_pred_on.sum", "GH100").unit, "inst");
  EXPECT_EQ(describe_metric("sm__warps_launched.sum", "GH100").unit, "warp");  // Nsight Python's test expects it
  EXPECT_EQ(describe_metric("sm__inst_executed.avg.per_cycle_active", "GH100").unit, "inst/cycle");
  EXPECT_EQ(describe_metric("lts__t_sectors.sum", "GH100").unit, "sector");
}

TEST(CounterUnits, CuptiUnitsBecomeNsightComputes) {
  EXPECT_EQ(counters::ncu_unit("nanosecond"), "ns");
  EXPECT_EQ(counters::ncu_unit("percent"), "%");
  EXPECT_EQ(counters::ncu_unit("dram_cycle"), "cycle");
  EXPECT_EQ(counters::ncu_unit("instruction/warp"), "inst/warp");
  EXPECT_EQ(counters::ncu_unit("byte/cta"), "byte/block");
  EXPECT_EQ(counters::ncu_unit("register/thread"), "register/thread");
  EXPECT_EQ(counters::ncu_unit("gpc_cycle/warp"), "cycle/warp");
  EXPECT_EQ(counters::ncu_unit(""), "");                        // unitless stays unitless
  EXPECT_EQ(counters::ncu_unit("gpc_cyclenew_thing"), "gpc_cyclenew_thing");  // not in the table: CUPTI's
}

// Every unit kind of the GH100's metrics as Nsight Compute 2025.3 printed it on the H200
// (nsight_compat_check.sh part a, --print-units base: 53 metrics, each unit with its rate).
TEST(CounterUnits, AsNsightComputePrintsThemOnTheH200) {
  const std::pair<const char*, const char*> seen[] = {
      {"instruction/gpc_cycle", "inst/cycle"},     {"byte/l2_sector", "byte/sector"},
      {"byte/second", "byte/s"},                   {"instruction/second", "inst/s"},
      {"nanosecond/second", "ns/s"},               {"gpc_cycle/second", "hz"},
      {"l1tex_request/second", "request/s"},       {"lrc_sector/second", "sector/s"},
      {"thread/second", "thread/s"},               {"warp/second", "warp/s"},
      {"cta/second", "block/s"},                   {"ctagpc_cycle", "block"},
      {"ctagpc_cycle/second", "block/s"},          {"gpc_cyclewarp", "warp"},
      {"gpc_cyclewarp/second", "warp/s"},          {"gpc_cycleinstruction/warp", "inst/warp"},
      {"branch_target", "branches"},               {"branch_target/second", "branches/s"},
      {"fe_op", "ops"},                            {"fe_op/second", "ops/s"},
      {"cga", ""},                                 {"cga/second", ""},
      {"cgagpc_cycle", ""},                        {"cgagpc_cycle/second", ""},
      {"math_op", ""},                             {"math_op/second", ""},
      {"l1data_bank_access", ""},                  {"l1data_bank_access/second", "1/s"},
      {"l1data_bank_conflict", ""},                {"l1data_bank_conflict/second", "1/s"},
      {"l2_tag", ""},                              {"l1tex_tag/second", "1/s"},
      {"l1tex_wavefront", ""},                     {"l1tex_wavefront/second", "1/s"},
      {"byte/l1tex_wavefront", "byte"},            {"l2_sector/l1tex_request", "sector"},
      {"l2_requestl2_sector/gcc_request", ""},     {"l2_requestl2_sector/gcc_requestsecond", ""},
  };
  for (const auto& [cupti, ncu] : seen) EXPECT_EQ(counters::ncu_unit(cupti), ncu) << cupti;
}

TEST_F(HostApi, MisspeltNamesAreRejectedWithTheClosestValidNames) {
  std::string m = rejection("dram__byte_read.sum");
  EXPECT_NE(m.find("Invalid value ['dram__byte_read.sum'] for kscope::describe_metric(): unknown metric "
                   "'dram__byte_read.sum' for chip GH100"),
            std::string::npos)
      << m;
  EXPECT_NE(m.find("'dram__bytes_read.sum'"), std::string::npos) << m;
  EXPECT_NE(m.find("(`kscope metrics --chip GH100` lists every metric; kscope::list_metrics() returns them)"),
            std::string::npos)
      << m;
  m = rejection("sm__throughput.avg.pct_of_peak_sustained_elapsd");
  EXPECT_NE(m.find("'sm__throughput.avg.pct_of_peak_sustained_elapsed'"), std::string::npos) << m;
  m = rejection("sm__throughput.avg");  // a throughput needs rollup and submetric
  EXPECT_NE(m.find("sm__throughput.avg.pct_of_peak_sustained_"), std::string::npos) << m;
  m = rejection("gpu__time_duration");  // a bare base is not collectable
  EXPECT_NE(m.find("needs a rollup or submetric suffix"), std::string::npos) << m;
  EXPECT_NE(m.find("'gpu__time_duration.sum'"), std::string::npos) << m;
  m = rejection("launch__registers_per_thread");  // a launch attribute kscope does not compute
  EXPECT_NE(m.find("launch attribute"), std::string::npos) << m;
  EXPECT_NE(m.find("the counters backend computes launch__block_size, launch__grid_size"), std::string::npos) << m;
  EXPECT_NE(m.find("Use Backend::ncu for it"), std::string::npos) << m;
  m = rejection("bogus__metric.sum");
  EXPECT_NE(m.find("Did you mean"), std::string::npos) << m;
  // At most 5 suggestions.
  const auto start = m.find("Did you mean");
  EXPECT_LE(std::count(m.begin() + static_cast<std::ptrdiff_t>(start), m.end(), ','), 4) << m;
}

TEST_F(HostApi, PassPlanningOnGH100) {
  EXPECT_EQ(count_passes({"gpu__time_duration.sum"}, "GH100"), 1u);
  EXPECT_EQ(count_passes({"dram__bytes_read.sum"}, "GH100"), 1u);
  EXPECT_EQ(count_passes({"sm__throughput.avg.pct_of_peak_sustained_elapsed"}, "GH100"), 8u);
  EXPECT_EQ(count_passes({"gpu__time_duration.sum", "sm__throughput.avg.pct_of_peak_sustained_elapsed",
                          "dram__throughput.avg.pct_of_peak_sustained_elapsed"},
                         "GH100"),
            8u);
  // SASS metrics are instrumented and never share a pass with hardware counters.
  EXPECT_EQ(count_passes({"gpu__time_duration.sum", "smsp__sass_inst_executed_op_global_ld.sum"}, "GH100"), 2u);
  EXPECT_EQ(count_passes(sol_metrics(), "GH100"), 9u);  // the memory throughput adds one
  EXPECT_THROW(count_passes({"gpu__time_duration.sum", "bogus__metric.sum"}, "GH100"), ConfigError);
  EXPECT_THROW(count_passes({}, "GH100"), ConfigError);
}

TEST_F(HostApi, ListingGivesEveryBaseMetricWithItsSuffixes) {
  const auto metrics = list_metrics("GH100");
  EXPECT_GT(metrics.size(), 3000u);  // 3650 in CUDA 13.0: 3389 counters, 205 ratios, 56 throughputs
  const auto dram = std::find_if(metrics.begin(), metrics.end(),
                                 [](const MetricInfo& m) { return m.name == "dram__bytes_read"; });
  ASSERT_NE(dram, metrics.end());
  EXPECT_EQ(dram->type, MetricType::counter);
  EXPECT_EQ(dram->unit, "byte");
  EXPECT_EQ(dram->suffixes.size(), 44u);
  EXPECT_TRUE(std::is_sorted(metrics.begin(), metrics.end(),
                             [](const MetricInfo& a, const MetricInfo& b) { return a.name < b.name; }));
}

TEST_F(HostApi, EveryPresetMetricIsValid) {
  for (const auto& m : sol_metrics()) EXPECT_NO_THROW(describe_metric(m, "GH100")) << m;
}

TEST(LaunchMetrics, ComputedFromTheLaunchAndTheDevice) {
  counters::LaunchShape launch;
  launch.grid = {528, 2, 1};
  launch.block = {256, 1, 2};
  launch.dynamic_shared_bytes = 4096;
  const auto value = [&](const char* name) { return counters::find_launch_metric(name)->value(launch, 132); };
  EXPECT_EQ(value("launch__grid_size"), 1056);
  EXPECT_EQ(value("launch__block_size"), 512);
  EXPECT_EQ(value("launch__thread_count"), 1056 * 512);
  EXPECT_EQ(value("launch__sm_count"), 132);
  EXPECT_EQ(value("launch__shared_mem_per_block_dynamic"), 4096);
  EXPECT_EQ(counters::find_launch_metric("launch__registers_per_thread"), nullptr);
  EXPECT_EQ(counters::find_launch_metric("sm__cycles_elapsed.avg"), nullptr);
}

TEST(LaunchMetrics, TheLayoutPutsLaunchValuesBesideTheCountersInTheRequestedOrder) {
  const counters::MetricLayout layout({"launch__grid_size", "dram__bytes_read.sum", "launch__sm_count",
                                       "sm__cycles_elapsed.avg"}, 132);
  EXPECT_TRUE(layout.has_launch_metrics());
  EXPECT_EQ(layout.counter_names(), (std::vector<std::string>{"dram__bytes_read.sum", "sm__cycles_elapsed.avg"}));
  counters::LaunchShape launch;
  launch.grid = {10, 1, 1};
  launch.block = {32, 1, 1};
  EXPECT_EQ(layout.values({1e6, 5e3}, launch), (std::vector<double>{10, 1e6, 132, 5e3}));
  // Only launch metrics: the profiler still has to find the kernels, with one unreported counter.
  const counters::MetricLayout launches_only({"launch__block_size"}, 132);
  EXPECT_EQ(launches_only.counter_names(), (std::vector<std::string>{"gpu__time_duration.sum"}));
  EXPECT_EQ(launches_only.values({777}, launch), (std::vector<double>{32}));
  // Without launch metrics the counters' values pass through.
  EXPECT_EQ(counters::MetricLayout().values({1, 2}, launch), (std::vector<double>{1, 2}));
}

TEST_F(HostApi, LaunchMetricsAreDescribedAndNeedNoPass) {
  const MetricInfo info = describe_metric("launch__sm_count", "GH100");
  EXPECT_EQ(info.unit, "SM");
  EXPECT_EQ(info.hw_unit, "launch");
  EXPECT_EQ(count_passes({"launch__grid_size", "launch__sm_count"}, "GH100"), 1u);
  EXPECT_EQ(count_passes({"launch__grid_size", "sm__throughput.avg.pct_of_peak_sustained_elapsed"}, "GH100"), 8u);
}

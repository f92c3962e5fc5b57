// Backend::ncu's report import on recorded exports of ncu's raw page: the header and units rows,
// thousands separators, quoting, "n/a" values, and the mapping of kernels to (config, run, region)
// by their NVTX range names.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <sstream>

#include "backends/ncu/kernel_mapping.hpp"
#include "backends/ncu/ncu_csv.hpp"
#include "backends/ncu/ncu_report.hpp"
#include "backends/ncu/range_name.hpp"
#include "kscope/errors.hpp"

using namespace kscope;
using namespace kscope::ncu;

namespace {

std::string data(const std::string& name) {
  std::ifstream in(std::string(KSCOPE_NCU_TEST_DATA) + "/" + name);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_FALSE(text.str().empty()) << name;
  return text.str();
}

NcuCsv recorded(const std::string& name) { return parse_ncu_csv(data(name), name); }

ReportContents recorded_report(const std::string& stem, const std::vector<std::string>& metrics) {
  return read_report(recorded(stem + "_raw.csv"), recorded(stem + "_nvtx.csv"), metrics, stem + ".ncu-rep");
}

// The manifest the child writes for 3 configs x 2 recorded runs of one annotation.
ChildManifest saxpy_manifest() {
  ChildManifest m;
  for (std::size_t c = 0; c < 3; ++c)
    for (std::size_t r = 0; r < 2; ++r) m.runs.push_back({c, r, {{"saxpy", false, ""}}});
  return m;
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const BackendError& e) {
    return e.what();
  }
  return "no BackendError";
}

}  // namespace

TEST(NcuCsv, ReadsHeaderUnitsRowAndQuotedFieldsWithCommas) {
  const NcuCsv csv = recorded("saxpy_raw.csv");
  ASSERT_EQ(csv.columns.size(), 17u);
  EXPECT_EQ(csv.columns[0], "ID");
  EXPECT_EQ(csv.columns.back(), "gpu__time_duration.sum");
  EXPECT_EQ(csv.units[*csv.find("gpu__time_duration.sum")], "ns");
  EXPECT_EQ(csv.units[0], "");
  ASSERT_EQ(csv.rows.size(), 6u);
  EXPECT_EQ(csv.rows[0][*csv.find("Kernel Name")], "void saxpy<float>(int, float, const float *, float *)");
  EXPECT_EQ(csv.rows[0][*csv.find("Block Size")], "(256, 1, 1)");
  EXPECT_FALSE(csv.find("no such column"));
}

TEST(NcuCsv, ParsesThousandsSeparatorsAndRejectsText) {
  EXPECT_DOUBLE_EQ(*parse_ncu_number("1,234.5"), 1234.5);
  EXPECT_DOUBLE_EQ(*parse_ncu_number("1,980,000.00"), 1980000.0);
  EXPECT_DOUBLE_EQ(*parse_ncu_number("5792"), 5792.0);
  EXPECT_DOUBLE_EQ(*parse_ncu_number("-3.2e+05"), -320000.0);
  EXPECT_FALSE(parse_ncu_number("n/a"));
  EXPECT_FALSE(parse_ncu_number("No-CC"));
  EXPECT_FALSE(parse_ncu_number("PolicySpread"));
  EXPECT_FALSE(parse_ncu_number(""));
  EXPECT_FALSE(parse_ncu_number("nan"));
  EXPECT_TRUE(is_not_available("n/a"));
  EXPECT_FALSE(is_not_available("0"));
}

TEST(NcuCsv, HandlesDoubledQuotesCrLfMessagesAndAMissingUnitsRow) {
  const NcuCsv csv = parse_ncu_csv(
      "==WARNING== something ncu said first\r\n"
      "\"ID\",\"Kernel Name\",\"gpu__time_duration.sum\"\r\n"
      "\"0\",\"k<\"\"x\"\">(int)\",\"12\"\r\n",
      "inline");
  ASSERT_EQ(csv.rows.size(), 1u);
  EXPECT_EQ(csv.rows[0][1], "k<\"x\">(int)");
  EXPECT_EQ(csv.units, std::vector<std::string>(3, ""));
}

TEST(NcuCsv, NamesTheLineOfAMalformedRow) {
  EXPECT_NE(error_of([] { parse_ncu_csv("\"ID\",\"A\"\n\"\",\"\"\n\"0\"\n", "x.csv"); }).find("x.csv: line 3 has 1 fields"),
            std::string::npos);
  EXPECT_NE(error_of([] { parse_ncu_csv("\"Kernel\"\n", "y.csv"); }).find("no \"ID\" column"), std::string::npos);
  EXPECT_NE(error_of([] { parse_ncu_csv("", "z.csv"); }).find("no CSV table"), std::string::npos);
  EXPECT_NE(error_of([] { parse_ncu_csv("\"ID\n", "q.csv"); }).find("unterminated"), std::string::npos);
}

TEST(NcuReport, JoinsBothExportsByIdWithBaseUnitsAndDeviceFacts) {
  const ReportContents r = recorded_report("saxpy", {"gpu__time_duration.sum"});
  ASSERT_EQ(r.metrics.size(), 1u);
  EXPECT_EQ(r.metrics[0].name, "gpu__time_duration.sum");
  EXPECT_EQ(r.metrics[0].unit, "ns");
  ASSERT_EQ(r.kernels.size(), 6u);
  EXPECT_EQ(r.kernels[0].id, 0u);
  EXPECT_EQ(r.kernels[0].kernel, "void saxpy<float>(int, float, const float *, float *)");
  EXPECT_EQ(r.kernels[0].nvtx_name, "saxpy [kscope:c0:r0:g0]");
  EXPECT_DOUBLE_EQ(r.kernels[0].values[0], 1234.5);
  EXPECT_DOUBLE_EQ(r.kernels[5].values[0], 4940.0);
  EXPECT_EQ(r.gpu, "NVIDIA H200");
  EXPECT_EQ(r.host, "gpu-h200-01");
  EXPECT_DOUBLE_EQ(r.rated_sm_clock_mhz, 1980.0);
  EXPECT_DOUBLE_EQ(r.rated_memory_clock_mhz, 3201.0);
  EXPECT_EQ(r.sm_count, 132u);  // what the roofs come from
  EXPECT_EQ(r.compute_capability, 90u);
  EXPECT_EQ(r.memory_bus_width_bits, 6144u);
}

TEST(NcuReport, UnknownMetricReadingNaIsAnErrorNamingItAndTheReport) {
  const std::string e = error_of([] { recorded_report("bogus_metric", {"bogus__metric.sum"}); });
  EXPECT_NE(e.find("'bogus__metric.sum' as \"n/a\" for 6 of 6 kernels"), std::string::npos) << e;
  EXPECT_NE(e.find("bogus_metric.ncu-rep"), std::string::npos);
  EXPECT_NE(e.find("--query-metrics"), std::string::npos);
}

TEST(NcuReport, MetricWithoutColumnIsAnError) {
  const std::string e = error_of([] { recorded_report("saxpy", {"dram__bytes_read.sum"}); });
  EXPECT_NE(e.find("did not collect metric 'dram__bytes_read.sum'"), std::string::npos) << e;
}

TEST(NcuReport, DurationsInOtherUnitsBecomeNanoseconds) {
  EXPECT_EQ(to_kscope_unit("us").unit, "ns");
  EXPECT_DOUBLE_EQ(to_kscope_unit("us").factor, 1e3);
  EXPECT_DOUBLE_EQ(to_kscope_unit("msecond").factor, 1e6);
  EXPECT_EQ(to_kscope_unit("byte").unit, "byte");
  EXPECT_DOUBLE_EQ(to_kscope_unit("%").factor, 1.0);
  const std::string text = "\"ID\",\"Kernel Name\",\"gpu__time_duration.sum\"\n\"\",\"\",\"us\"\n\"0\",\"k\",\"449.888\"\n";
  const NcuCsv csv = parse_ncu_csv(text, "us.csv");
  NcuCsv renamed = csv;
  renamed.rows[0][1] = "a [kscope:c0:r0:g0]";
  const ReportContents r = read_report(csv, renamed, {"gpu__time_duration.sum"}, "us.ncu-rep");
  EXPECT_DOUBLE_EQ(r.kernels[0].values[0], 449888.0);
  EXPECT_EQ(r.metrics[0].unit, "ns");
  EXPECT_TRUE(std::isnan(r.rated_sm_clock_mhz));
  EXPECT_EQ(r.sm_count, 0u);
  EXPECT_EQ(r.compute_capability, 0u);
}

TEST(NcuReport, KernelNamesAreDemangledAsTheOtherBackendsReportThem) {
  // Imported with --print-kernel-base mangled: ncu's own demangling drops namespaces.
  const std::string text =
      "\"ID\",\"Kernel Name\",\"gpu__time_duration.sum\"\n\"\",\"\",\"ns\"\n"
      "\"0\",\"_ZN11kscope_test11spin_kernelEm\",\"1\"\n\"1\",\"triton_poi_fused_mul_0\",\"2\"\n";
  const NcuCsv csv = parse_ncu_csv(text, "names.csv");
  NcuCsv renamed = csv;
  renamed.rows[0][1] = "a [kscope:c0:r0:g0]";
  renamed.rows[1][1] = "a [kscope:c0:r1:g0]";
  const ReportContents r = read_report(csv, renamed, {"gpu__time_duration.sum"}, "names.ncu-rep");
  EXPECT_EQ(r.kernels[0].kernel, "kscope_test::spin_kernel(unsigned long)");
  EXPECT_EQ(r.kernels[1].kernel, "triton_poi_fused_mul_0");  // extern "C": kept as it is
}

TEST(NcuRangeName, RoundTripsAndToleratesDomainPrefixes) {
  const RangeId id{2, 7, 1};
  const std::string name = range_name("my [odd] name", id);
  EXPECT_EQ(name, "my [odd] name [kscope:c2:r7:g1]");
  EXPECT_EQ(parse_range_id(name), id);
  EXPECT_EQ(parse_range_id("kscope@" + name), id);
  EXPECT_EQ(parse_range_id("a [kscope:c0:r0:g0] [kscope:c1:r2:g3]"), (RangeId{1, 2, 3}));
  EXPECT_FALSE(parse_range_id("void saxpy<float>(int)"));
  EXPECT_FALSE(parse_range_id("x [kscope:c1:r2]"));
}

TEST(NcuMapping, AttributesEveryKernelByItsRangeNotItsPosition) {
  ReportContents r = recorded_report("saxpy", {"gpu__time_duration.sum"});
  std::swap(r.kernels[0], r.kernels[5]);  // report order must not matter
  const auto runs = map_kernels(saxpy_manifest(), r, {"rep", "log", true});
  ASSERT_EQ(runs.size(), 6u);
  ASSERT_EQ(runs[0].size(), 1u);
  ASSERT_EQ(runs[0][0].size(), 1u);
  EXPECT_DOUBLE_EQ(runs[0][0][0].values[0], 1234.5);
  EXPECT_DOUBLE_EQ(runs[5][0][0].values[0], 4940.0);
  EXPECT_EQ(runs[3][0][0].name, "void saxpy<float>(int, float, const float *, float *)");
}

TEST(NcuMapping, RangeReplayResultsCarryNoKernelNameAndMayUseTheirOwnName) {
  ReportContents r = recorded_report("saxpy", {"gpu__time_duration.sum"});
  for (auto& k : r.kernels) std::swap(k.kernel, k.nvtx_name);  // the result named after the range itself
  const auto runs = map_kernels(saxpy_manifest(), r, {"rep", "log", false});
  EXPECT_EQ(runs[2][0][0].name, "");
  EXPECT_DOUBLE_EQ(runs[2][0][0].values[0], 2468.0);
}

TEST(NcuMapping, LostKernelIsAKernelCountMismatchWithTheRuns) {
  const ReportContents r = recorded_report("lost_kernel", {"gpu__time_duration.sum"});
  const std::string e = error_of([&] { map_kernels(saxpy_manifest(), r, {"x.ncu-rep", "x.log", true}); });
  EXPECT_NE(e.find("kernel count mismatch"), std::string::npos) << e;
  EXPECT_NE(e.find("annotation 'saxpy', config 2"), std::string::npos) << e;
  EXPECT_NE(e.find("0 kernel(s) in run(s) 2"), std::string::npos) << e;
  EXPECT_NE(e.find("1 kernel(s) in run(s) 1"), std::string::npos) << e;
  EXPECT_NE(e.find("x.log"), std::string::npos);
}

TEST(NcuMapping, FailedRegionsAreLeftOutOfTheCountCheck) {
  const ReportContents r = recorded_report("lost_kernel", {"gpu__time_duration.sum"});
  ChildManifest m = saxpy_manifest();
  m.runs[3].regions[0].failed = true;  // config 2, run 2: the body marked it failed
  EXPECT_NO_THROW(map_kernels(m, r, {"rep", "log", true}));
}

TEST(NcuMapping, KernelInAUserNvtxRangeOrAnUnknownRunIsAnError) {
  ReportContents r = recorded_report("saxpy", {"gpu__time_duration.sum"});
  r.kernels[1].nvtx_name = "my_inner_range";
  EXPECT_NE(error_of([&] { map_kernels(saxpy_manifest(), r, {"rep", "log", true}); }).find("NVTX range 'my_inner_range'"),
            std::string::npos);
  r = recorded_report("saxpy", {"gpu__time_duration.sum"});
  r.kernels[1].nvtx_name = "saxpy [kscope:c9:r0:g0]";
  EXPECT_NE(error_of([&] { map_kernels(saxpy_manifest(), r, {"rep", "log", true}); }).find("did not record"),
            std::string::npos);
}

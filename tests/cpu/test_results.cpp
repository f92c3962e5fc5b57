// Table layout and writers on real engine output (simulated backend).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "kscope/annotation.hpp"
#include "kscope/detail/session_headline.hpp"
#include "kscope/errors.hpp"
#include "kscope/profile.hpp"
#include "kscope/testing.hpp"

using namespace kscope;

namespace {

Results small_results(CacheControl cache = CacheControl::all) {
  kscope::testing::SimulatedBackend backend;
  backend.set_clock_readings({{1980, 3201}});
  Settings s;
  s.runs = 3;
  s.verbosity = Verbosity::quiet;
  s.cache_control = cache;
  double t = 100;
  return profile_with_backend(Sweep().axis("n", {16, 32}).axis("dtype", {"f32"}), s, [&](const Config&) {
    Annotation a("saxpy");
    backend.launch("void saxpy<float>(int, float*)", t += 10);
  }, backend);
}

std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

// Results::samples() reads as a vector of SampleRow, each built from the columns it is stored in.
TEST(Results, SamplesReadAsAVectorOfRows) {
  const Results r = small_results();
  const Samples& samples = r.samples();
  ASSERT_EQ(samples.size(), 6u);
  EXPECT_FALSE(samples.empty());
  std::vector<SampleRow> rows(samples.begin(), samples.end());
  ASSERT_EQ(rows.size(), 6u);
  std::size_t i = 0;
  for (const SampleRow& s : samples) {
    EXPECT_EQ(s.annotation, "saxpy");
    EXPECT_EQ(s.config_index, i / 3);
    EXPECT_EQ(s.run, i % 3);
    EXPECT_EQ(s.metric, "test__kernel_duration");
    EXPECT_EQ(s.unit, "ns");
    EXPECT_EQ(s.value, 120.0 + 10.0 * static_cast<double>(i % 3) + 40.0 * static_cast<double>(i / 3));  // after a warm-up
    EXPECT_EQ(s.kernel, "void saxpy<float>(int, float*)");
    EXPECT_EQ(s.sm_clock_mhz, 1980);
    EXPECT_EQ(s.memory_clock_mhz, 3201);
    EXPECT_FALSE(s.throttled);
    EXPECT_TRUE(s.info.empty());
    EXPECT_EQ(samples[i].value, s.value);
    EXPECT_EQ(rows[i].value, s.value);
    ++i;
  }
  EXPECT_EQ(samples.front().value, 120.0);
  EXPECT_EQ(samples.back().value, 180.0);
  EXPECT_EQ(samples.end() - samples.begin(), 6);
  EXPECT_EQ(samples.begin()[4].run, 1u);
  EXPECT_THROW(samples.at(6), std::out_of_range);

  // Results built from rows, and copies, read the same.
  const Results built(r.session(), r.configs(), r.rows(), rows, r.info_columns(), r.settings());
  const Results copy = built;
  ASSERT_EQ(copy.samples().size(), 6u);
  for (std::size_t k = 0; k < rows.size(); ++k) EXPECT_EQ(copy.samples()[k].value, rows[k].value);
  EXPECT_TRUE(Results().samples().empty());
}

TEST(Results, SummaryColumnsInDocumentedOrder) {
  const Table t = small_results().summary_table();
  const std::vector<std::string> expected{
      "Annotation", "n", "dtype", "Metric", "Unit", "AvgValue", "StdDev", "MinValue", "MaxValue", "Median",
      "Q1", "Q3", "IQR", "P20", "P80", "Outliers", "NumRuns", "CI95_Lower", "CI95_Upper", "RelativeStdDevPct", "StableMeasurement", "Normalized",
      "NormalizationValue", "Geomean", "Kernel", "GPU", "Host", "Backend", "ReplayPasses", "CacheControl", "ClockControl", "Mode",
      "RatedSMClockMHz", "RatedMemoryClockMHz", "LockedSMClockMHz", "LockedMemoryClockMHz", "IdlePowerW", "ObservedSMClockMHz",
      "ObservedMemoryClockMHz", "ThrottledRuns", "Converged", "ThermalPauses", "OtherProcessRuns", "OverlappedRuns", "HostGapRuns",
      "WorkBytes", "WorkFLOPs", "WorkKind",
      "ArithmeticIntensity", "AchievedGBps", "DRAMRoofGBps", "DRAMRoofPct", "DRAMRoofPct_CI95_Lower",
      "DRAMRoofPct_CI95_Upper", "AchievedTFLOPs", "ComputeRoofTFLOPs", "ComputeRoofPct", "ComputeRoofPct_CI95_Lower",
      "ComputeRoofPct_CI95_Upper", "Bound"};
  EXPECT_EQ(t.columns, expected);
  ASSERT_EQ(t.rows.size(), 2u);
  EXPECT_EQ(std::get<std::int64_t>(t.rows[1][t.column("n")]), 32);
  EXPECT_EQ(std::get<std::string>(t.rows[1][t.column("dtype")]), "f32");
  EXPECT_EQ(std::get<std::int64_t>(t.rows[0][t.column("NumRuns")]), 3);
  EXPECT_EQ(std::get<bool>(t.rows[0][t.column("Normalized")]), false);
  EXPECT_TRUE(std::holds_alternative<std::monostate>(t.rows[0][t.column("NormalizationValue")]));
  EXPECT_EQ(std::get<std::string>(t.rows[0][t.column("Backend")]), "test (simulated)");
  EXPECT_EQ(std::get<std::string>(t.rows[0][t.column("CacheControl")]), "all");
  EXPECT_DOUBLE_EQ(std::get<double>(t.rows[0][t.column("ObservedSMClockMHz")]), 1980.0);
}

TEST(Results, SamplesTableHasOneRowPerRunAndMetric) {
  const Table t = small_results().samples_table();
  ASSERT_EQ(t.rows.size(), 6u);
  EXPECT_EQ(std::get<std::int64_t>(t.rows[2][t.column("Run")]), 2);
  EXPECT_EQ(std::get<std::string>(t.rows[0][t.column("Metric")]), "test__kernel_duration");
  // The first recorded value follows the single warm-up run (110 ns).
  EXPECT_DOUBLE_EQ(std::get<double>(t.rows[0][t.column("Value")]), 120.0);
}

TEST(Results, SingleRunGivesUndefinedStabilityNotFalse) {
  kscope::testing::SimulatedBackend backend;
  Settings s;
  s.runs = 1;
  s.verbosity = Verbosity::quiet;
  auto r = profile_with_backend(Sweep(), s, [&](const Config&) { Annotation a("k"); backend.launch("k", 5); }, backend);
  const Table t = r.summary_table();
  EXPECT_TRUE(std::holds_alternative<std::monostate>(t.rows[0][t.column("StableMeasurement")]));
  EXPECT_TRUE(std::holds_alternative<std::monostate>(t.rows[0][t.column("StdDev")]));
}

TEST(Results, WritesCsvAndStrictJson) {
  const auto dir = std::filesystem::temp_directory_path() / "kscope_results_test";
  std::filesystem::create_directories(dir);
  const Results r = small_results();
  r.write_all((dir / "x_").string());
  const std::string csv = slurp(dir / "x_summary.csv");
  EXPECT_EQ(csv.substr(0, csv.find('\n')), "Annotation,n,dtype,Metric,Unit,AvgValue,StdDev,MinValue,MaxValue,Median,Q1,Q3,IQR,P20,P80,Outliers,NumRuns,"
            "CI95_Lower,CI95_Upper,RelativeStdDevPct,StableMeasurement,Normalized,NormalizationValue,Geomean,Kernel,"
            "GPU,Host,Backend,ReplayPasses,CacheControl,ClockControl,Mode,RatedSMClockMHz,RatedMemoryClockMHz,LockedSMClockMHz,"
            "LockedMemoryClockMHz,IdlePowerW,ObservedSMClockMHz,ObservedMemoryClockMHz,ThrottledRuns,Converged,ThermalPauses,"
            "OtherProcessRuns,OverlappedRuns,HostGapRuns,WorkBytes,WorkFLOPs,WorkKind,ArithmeticIntensity,AchievedGBps,DRAMRoofGBps,DRAMRoofPct,"
            "DRAMRoofPct_CI95_Lower,DRAMRoofPct_CI95_Upper,AchievedTFLOPs,ComputeRoofTFLOPs,ComputeRoofPct,"
            "ComputeRoofPct_CI95_Lower,ComputeRoofPct_CI95_Upper,Bound");
  EXPECT_NE(csv.find("\"void saxpy<float>(int, float*)\""), std::string::npos);  // quoted: has a comma
  const auto doc = nlohmann::json::parse(slurp(dir / "x_results.json"));  // throws on bare NaN
  EXPECT_EQ(doc["session"]["backend"], "test (simulated)");
  EXPECT_EQ(doc["summary"].size(), 2u);
  EXPECT_EQ(doc["samples"].size(), 6u);
  EXPECT_TRUE(doc["summary"][0]["NormalizationValue"].is_null());
  EXPECT_EQ(doc["configs"][0][0], 16);
  EXPECT_EQ(doc["summary"][0]["Config"], 0);
  std::filesystem::remove_all(dir);
}

TEST(Results, WritingToAMissingDirectoryNamesThePath) {
  try {
    small_results().write_csv("/nonexistent-dir/x.csv");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("cannot write '/nonexistent-dir/x.csv'"), std::string::npos);
  }
}

TEST(Results, ConsoleOutputShowsSessionAndRows) {
  std::ostringstream out;
  out << small_results();
  const std::string text = out.str();
  // The session's one headline first.
  EXPECT_EQ(text.rfind("kscope: " + detail::session_headline(small_results().session()) + " | rated SM ", 0), 0u) << text;
  EXPECT_NE(text.find("backend test (simulated) | cache_control all | clock_control none"), std::string::npos) << text;
  EXPECT_NE(text.find("saxpy"), std::string::npos);
  EXPECT_NE(text.find("test__kernel_duration"), std::string::npos);
}

// kscope's results file: Results::write_json and load_results give back what was saved.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <memory>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>

#include "io/json_printer.hpp"
#include "io/results_file.hpp"
#include "kscope/annotation.hpp"
#include "kscope/errors.hpp"
#include "kscope/profile.hpp"
#include "kscope/testing.hpp"
#include "test_support.hpp"

using namespace kscope;

namespace {

constexpr double nan = std::numeric_limits<double>::quiet_NaN();
constexpr double inf = std::numeric_limits<double>::infinity();

class ResultsFile : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("kscope_results_file_" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  std::string write_text(const std::string& name, const std::string& text) const {
    std::ofstream(path(name)) << text;
    return path(name);
  }

  std::filesystem::path dir_;
};

std::string slurp(const std::string& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Every field away from its default, with NaN, infinities, a normalized row (Mean != AvgValue),
// axes of all four types (a double axis holding 2.0) and a config no row measured.
Results handmade_results() {
  SessionInfo session;
  session.backend = Backend::counters;
  session.replay_passes = 3;
  session.cache_control = CacheControl::none;
  session.clock_control = ClockControl::base;
  session.gpu = "NVIDIA H200";
  session.gpu_uuid = "GPU-12345678-0000-0000-0000-000000000000";
  session.driver_version = "580.65.06";
  session.host = "gpu-host";
  session.rated_sm_clock_mhz = 1980;
  session.rated_memory_clock_mhz = nan;
  session.locked_sm_clock_mhz = 1590;
  session.locked_memory_clock_mhz = 3201;
  session.thermal_pauses = 2;
  session.thermal_pause_s = 1.25;
  session.report_path = "/tmp/x.ncu-rep";
  session.metrics = {"sm__cycles_elapsed.max", "dram__bytes_read.sum"};
  session.sm_count = 132;
  session.compute_capability = 90;
  session.memory_bus_width_bits = 6144;

  auto names = std::make_shared<const std::vector<std::string>>(
      std::vector<std::string>{"n", "scale", "dtype", "fused"});
  const std::vector<Config> configs{
      Config(names, {Value(1 << 20), Value(2.0), Value("f32"), Value(true)}, 0),
      Config(names, {Value(-7), Value(0.1), Value("bf16 \"quoted\" \u00b5"), Value(false)}, 1),
      Config(names, {Value(std::int64_t{1} << 40), Value(-inf), Value(""), Value(true)}, 2),
  };

  SampleStatistics stats;
  stats.count = 4;
  stats.mean = 1234.5678901234567;
  stats.stddev = 12.25;
  stats.min = 1200;
  stats.max = 1300.5;
  stats.median = 1233;
  stats.ci95_lower = 1215.1;
  stats.ci95_upper = 1254.2;
  stats.rsd_pct = 0.99;
  stats.stable = true;
  stats.q1 = 1220;
  stats.q3 = 1250;
  stats.iqr = 30;
  stats.p20 = 1218;
  stats.p80 = 1260;
  stats.outliers = 1;
  SummaryRow normalized{"gemm", 0, "sm__cycles_elapsed.max", "cycle", stats, 0.5, "reference", 2469.1357802469134,
                        0.7, "void gemm<float>(int)|void epilogue()", 1979.5, 3201, 1, true, 2,
                        {Cell{std::int64_t{7}}, Cell{2.0}}};
  normalized.work = Work{1e9, 2.5e12, {Precision::bf16, true}};
  normalized.roofline = {2500, 812.25, 4917.1, {16.5, 15.25, nan}, 2030.5, 1070.5, {73.5, 70.25, 76.75},
                         Bound::compute};
  SampleStatistics undefined = stats;
  undefined.count = 1;
  undefined.stddev = nan;
  undefined.rsd_pct = nan;
  undefined.stable.reset();
  undefined.ci95_lower = nan;
  undefined.ci95_upper = nan;
  undefined.max = inf;
  SummaryRow plain{"gemm", 1, "bandwidth", "GB/s", undefined, 1234.5678901234567, "", nan, nan, "", nan, nan, 0,
                   std::nullopt, 0, {Cell{}, Cell{nan}}};
  plain.work = Work{0, 1e6, {Precision::fp64, false}};
  plain.roofline.arithmetic_intensity = inf;
  // Info collectors' cells of every type: an integer, reals (2.0 stays a real; NaN and the
  // infinities stay reals), text that reads like a number, a boolean, none.
  const std::vector<SampleRow> samples{
      {"gemm", 0, 0, "sm__cycles_elapsed.max", "cycle", 1200, "void gemm<float>(int)", 1980, 3201, false,
       {Cell{std::int64_t{-3}}, Cell{std::string("NaN")}, Cell{true}}},
      {"gemm", 0, 1, "sm__cycles_elapsed.max", "cycle", nan, "", nan, nan, true, {Cell{inf}, Cell{}, Cell{false}}},
      {"gemm", 1, 0, "bandwidth", "GB/s", inf, "k", 1755.5, 3201, false,
       {Cell{-inf}, Cell{std::string("Infinity")}, Cell{2.5}}},
      {"gemm", 1, 1, "bandwidth", "GB/s", -inf, "k", 1755.5, 3201, false, {Cell{nan}, Cell{std::string()}, Cell{}}},
  };
  const InfoColumns info{{"launches", "temperature_c"}, {"temperature_c", "driver", "fused"}};

  Settings settings;
  settings.runs = 4;
  settings.warmup_runs = 3;
  settings.backend = Backend::automatic;
  settings.metrics = {"sm__cycles_elapsed.max", "dram__bytes_read.sum"};
  settings.replay_mode = ReplayMode::range;
  settings.ncu_sections = {"SpeedOfLight"};
  settings.cache_control = CacheControl::none;
  settings.clock_control = ClockControl::base;
  settings.ignore_kernel_list = {"epilogue"};
  settings.normalize_against = "reference";
  settings.sampling = Sampling::adaptive;
  settings.adaptive = {StopCriterion::rsd, 0.5, 12, 500, 2.5, 60};
  settings.throttled_runs = ThrottledRuns::exclude;
  settings.stable_rsd_pct = 1.5;
  settings.bound_thresholds = {70, 55.5};
  settings.work = [](const Config&) { return Work{1, 2, {}}; };
  settings.shard = Shard{1, 4};
  settings.derive_metric = [](const MeasuredValues&, const Config&) { return std::vector<DerivedValue>{}; };
  settings.info_collectors.push_back({"launches", CollectionScope::run, [](const CollectionContext&) { return Cell{}; }});
  return Results(session, configs, {normalized, plain}, samples, info, settings);
}

bool same_number(double a, double b) { return (std::isnan(a) && std::isnan(b)) || a == b; }

// Two tables are equal cell by cell, type included (a NaN real equals a NaN real).
void expect_same_table(const Table& a, const Table& b) {
  ASSERT_EQ(a.columns, b.columns);
  ASSERT_EQ(a.rows.size(), b.rows.size());
  for (std::size_t r = 0; r < a.rows.size(); ++r)
    for (std::size_t c = 0; c < a.columns.size(); ++c) {
      const Cell& x = a.rows[r][c];
      const Cell& y = b.rows[r][c];
      const bool both_nan = std::holds_alternative<double>(x) && std::holds_alternative<double>(y) &&
                            same_number(std::get<double>(x), std::get<double>(y));
      EXPECT_TRUE(both_nan || x == y) << "row " << r << ", column " << a.columns[c];
    }
}

}  // namespace

TEST_F(ResultsFile, RoundTripKeepsEveryField) {
  const Results original = handmade_results();
  original.write_json(path("a.json"));
  const Results loaded = load_results(path("a.json"));

  // Everything the file holds, byte for byte, and every column of both tables.
  loaded.write_json(path("b.json"));
  EXPECT_EQ(slurp(path("a.json")), slurp(path("b.json")));
  expect_same_table(original.summary_table(), loaded.summary_table());
  expect_same_table(original.samples_table(), loaded.samples_table());

  // What the tables do not show, field by field.
  ASSERT_EQ(loaded.configs().size(), 3u);  // config 2 has no row, and is kept
  EXPECT_EQ(loaded.axis_names(), original.axis_names());
  for (std::size_t c = 0; c < 3; ++c) {
    EXPECT_EQ(loaded.configs()[c].values(), original.configs()[c].values()) << "config " << c;
    EXPECT_EQ(loaded.configs()[c].index(), c);
  }
  EXPECT_EQ(loaded.configs()[0].at("n").type(), ValueType::integer);
  EXPECT_EQ(loaded.configs()[0].at("scale").type(), ValueType::real);  // 2.0 stays a double
  EXPECT_EQ(loaded.configs()[2].at("n").as_int(), std::int64_t{1} << 40);
  EXPECT_EQ(loaded.configs()[2].at("scale").as_double(), -inf);
  EXPECT_EQ(loaded.configs()[1].at("dtype").as_string(), "bf16 \"quoted\" \u00b5");

  const SummaryRow& normalized = loaded.rows()[0];
  EXPECT_EQ(normalized.stats.mean, 1234.5678901234567);  // exact: not AvgValue * NormalizationValue
  EXPECT_EQ(normalized.avg_value, 0.5);
  EXPECT_EQ(normalized.normalized, "reference");
  EXPECT_EQ(normalized.converged, std::optional<bool>(true));
  const SummaryRow& plain = loaded.rows()[1];
  EXPECT_FALSE(plain.stats.stable.has_value());
  EXPECT_FALSE(plain.converged.has_value());
  EXPECT_EQ(plain.stats.max, inf);
  EXPECT_TRUE(std::isnan(plain.stats.stddev));
  EXPECT_EQ(normalized.work, (std::optional<Work>{Work{1e9, 2.5e12, {Precision::bf16, true}}}));
  EXPECT_EQ(normalized.roofline.bound, std::optional<Bound>(Bound::compute));
  EXPECT_EQ(normalized.roofline.dram_pct.ci95_lower, 15.25);
  EXPECT_TRUE(std::isnan(normalized.roofline.dram_pct.ci95_upper));
  EXPECT_EQ(normalized.roofline.compute_roof_tflops, 1070.5);
  EXPECT_EQ(plain.work, (std::optional<Work>{Work{0, 1e6, {Precision::fp64, false}}}));
  EXPECT_EQ(plain.roofline.arithmetic_intensity, inf);
  EXPECT_FALSE(plain.roofline.bound);
  ASSERT_EQ(loaded.samples().size(), 4u);
  EXPECT_TRUE(std::isnan(loaded.samples()[1].value));
  EXPECT_TRUE(loaded.samples()[1].throttled);
  EXPECT_EQ(loaded.samples()[2].value, inf);
  EXPECT_EQ(loaded.samples()[3].value, -inf);

  const SessionInfo& s = loaded.session();
  EXPECT_EQ(s.backend, Backend::counters);
  EXPECT_EQ(s.replay_passes, 3u);
  EXPECT_EQ(s.cache_control, CacheControl::none);
  EXPECT_EQ(s.clock_control, ClockControl::base);
  EXPECT_EQ(s.driver_version, "580.65.06");
  EXPECT_EQ(s.gpu_uuid, "GPU-12345678-0000-0000-0000-000000000000");
  EXPECT_TRUE(std::isnan(s.rated_memory_clock_mhz));
  EXPECT_EQ(s.locked_sm_clock_mhz, 1590);
  EXPECT_EQ(s.thermal_pauses, 2u);
  EXPECT_EQ(s.thermal_pause_s, 1.25);
  EXPECT_EQ(s.report_path, "/tmp/x.ncu-rep");
  EXPECT_EQ(s.metrics, (std::vector<std::string>{"sm__cycles_elapsed.max", "dram__bytes_read.sum"}));
  EXPECT_EQ(s.sm_count, 132u);
  EXPECT_EQ(s.compute_capability, 90u);
  EXPECT_EQ(s.memory_bus_width_bits, 6144u);

  const Settings& t = loaded.settings();
  EXPECT_EQ(t.runs, 4u);
  EXPECT_EQ(t.warmup_runs, 3u);
  EXPECT_EQ(t.backend, Backend::automatic);
  EXPECT_EQ(t.metrics, (std::vector<std::string>{"sm__cycles_elapsed.max", "dram__bytes_read.sum"}));
  EXPECT_EQ(t.replay_mode, ReplayMode::range);
  EXPECT_EQ(t.ncu_sections, std::vector<std::string>{"SpeedOfLight"});
  EXPECT_EQ(t.ignore_kernel_list, std::vector<std::string>{"epilogue"});
  EXPECT_EQ(t.normalize_against, "reference");
  EXPECT_EQ(t.sampling, Sampling::adaptive);
  EXPECT_EQ(t.adaptive.criterion, StopCriterion::rsd);
  EXPECT_EQ(t.adaptive.target_pct, 0.5);
  EXPECT_EQ(t.adaptive.min_runs, 12u);
  EXPECT_EQ(t.adaptive.max_runs, 500u);
  EXPECT_EQ(t.adaptive.config_budget_s, 2.5);
  EXPECT_EQ(t.adaptive.timeout_s, 60);
  EXPECT_EQ(t.throttled_runs, ThrottledRuns::exclude);
  EXPECT_EQ(t.stable_rsd_pct, 1.5);
  EXPECT_EQ(t.bound_thresholds.memory_pct, 70);
  EXPECT_EQ(t.bound_thresholds.compute_pct, 55.5);
  EXPECT_FALSE(original.settings().derive_metric);  // callables are never kept
  EXPECT_FALSE(original.settings().work);
  // Of the info collectors, their names and scopes stay (how the columns were summarized); their functions go.
  ASSERT_FALSE(original.settings().info_collectors.empty());
  EXPECT_FALSE(original.settings().info_collectors.front().collect);
  ASSERT_EQ(t.info_collectors.size(), original.settings().info_collectors.size());
  for (std::size_t i = 0; i < t.info_collectors.size(); ++i) {
    EXPECT_EQ(t.info_collectors[i].name, original.settings().info_collectors[i].name);
    EXPECT_EQ(t.info_collectors[i].scope, original.settings().info_collectors[i].scope);
  }
  EXPECT_EQ(t.shard, (std::optional<Shard>{Shard{1, 4}}));

  EXPECT_EQ(loaded.info_columns().summary, original.info_columns().summary);
  EXPECT_EQ(loaded.info_columns().samples, original.info_columns().samples);
  EXPECT_EQ(loaded.rows()[0].info, original.rows()[0].info);  // 7 stays an integer, 2.0 a real
  EXPECT_TRUE(std::holds_alternative<double>(loaded.rows()[1].info[1]));
  EXPECT_TRUE(std::isnan(std::get<double>(loaded.rows()[1].info[1])));
  EXPECT_EQ(loaded.samples()[1].info[0], Cell{inf});
  EXPECT_EQ(loaded.samples()[2].info[0], Cell{-inf});
  EXPECT_EQ(loaded.samples()[2].info[1], Cell{std::string("Infinity")});
  EXPECT_EQ(loaded.samples()[0].info[1], Cell{std::string("NaN")});
  EXPECT_TRUE(std::holds_alternative<std::monostate>(loaded.samples()[1].info[1]));
}

TEST_F(ResultsFile, FilesWrittenBeforeShardsAndCollectorScopesStillLoad) {
  handmade_results().write_json(path("a.json"));
  nlohmann::json doc = nlohmann::json::parse(slurp(path("a.json")));
  doc["settings"].erase("shard");
  doc["settings"].erase("info_collectors");
  doc["session"].erase("metrics");
  doc.erase("shard_sessions");
  std::ofstream(path("old.json")) << doc.dump();
  const Results loaded = load_results(path("old.json"));
  EXPECT_FALSE(loaded.settings().shard);
  EXPECT_TRUE(loaded.settings().info_collectors.empty());
  EXPECT_TRUE(loaded.shard_sessions().empty());
  EXPECT_TRUE(loaded.session().metrics.empty());
  EXPECT_EQ(loaded.rows().size(), 2u);
}

TEST_F(ResultsFile, FilesWrittenBeforeTheRooflineStillLoad) {
  handmade_results().write_json(path("a.json"));
  nlohmann::json doc = nlohmann::json::parse(slurp(path("a.json")));
  for (const char* key : {"sm_count", "compute_capability", "memory_bus_width_bits"}) doc["session"].erase(key);
  doc["settings"].erase("bound_thresholds");
  for (auto& row : doc["summary"])
    for (const char* key : {"WorkBytes", "WorkFLOPs", "WorkKind", "ArithmeticIntensity", "AchievedGBps", "DRAMRoofGBps",
                            "DRAMRoofPct", "DRAMRoofPct_CI95_Lower", "DRAMRoofPct_CI95_Upper", "AchievedTFLOPs",
                            "ComputeRoofTFLOPs", "ComputeRoofPct", "ComputeRoofPct_CI95_Lower",
                            "ComputeRoofPct_CI95_Upper", "Bound"})
      row.erase(key);
  std::ofstream(path("old.json")) << doc.dump();
  const Results loaded = load_results(path("old.json"));
  EXPECT_EQ(loaded.session().sm_count, 0u);
  EXPECT_EQ(loaded.settings().bound_thresholds.memory_pct, 60);
  ASSERT_EQ(loaded.rows().size(), 2u);
  EXPECT_FALSE(loaded.rows()[0].work);
  EXPECT_TRUE(std::isnan(loaded.rows()[0].roofline.dram_pct.mean));
  EXPECT_FALSE(loaded.rows()[0].roofline.bound);
}

TEST_F(ResultsFile, AnUnknownWorkKindOrBoundIsRefusedNamingTheField) {
  handmade_results().write_json(path("a.json"));
  nlohmann::json doc = nlohmann::json::parse(slurp(path("a.json")));
  doc["summary"][0]["WorkKind"] = "fp4 tensor";
  std::ofstream(path("kind.json")) << doc.dump();
  EXPECT_NE(kscope_test::error_of([&] { load_results(path("kind.json")); }).find("summary row 0 \"WorkKind\" must be null or a kind such as"),
            std::string::npos);
  doc["summary"][0]["WorkKind"] = "fp32";
  doc["summary"][0]["Bound"] = "memory-bound";
  std::ofstream(path("bound.json")) << doc.dump();
  EXPECT_NE(kscope_test::error_of([&] { load_results(path("bound.json")); }).find("\"Bound\" must be null, \"memory\", \"compute\" or \"latency\""),
            std::string::npos);
}

TEST_F(ResultsFile, RoundTripOfAProfiledSweep) {
  kscope::testing::SimulatedBackend backend;
  backend.set_clock_readings({{1980, 3201, {}}, {1965, 3201, {}}});
  Settings s;
  s.runs = 5;
  s.verbosity = Verbosity::quiet;
  s.derive_metric = [](const MeasuredValues& m, const Config& c) {
    return std::vector<DerivedValue>{{"bandwidth", c.get<double>("bytes") / m.front(), "GB/s"}};
  };
  double t = 100;
  const Results original = profile_with_backend(
      Sweep().axis("bytes", {1e6, 2e6}).axis("dtype", {"f32", "f16"}), s,
      [&](const Config&) {
        Annotation a("copy");
        backend.launch("void copy<float>(float*)", t += 1.5);
      },
      backend);
  original.write_json(path("run.json"));
  const Results loaded = load_results(path("run.json"));
  expect_same_table(original.summary_table(), loaded.summary_table());
  expect_same_table(original.samples_table(), loaded.samples_table());
  ASSERT_EQ(loaded.rows().size(), original.rows().size());
  for (std::size_t i = 0; i < loaded.rows().size(); ++i) {
    EXPECT_TRUE(same_number(loaded.rows()[i].stats.mean, original.rows()[i].stats.mean));
    EXPECT_EQ(loaded.rows()[i].config_index, original.rows()[i].config_index);
  }
  EXPECT_EQ(loaded.settings().runs, 5u);
  EXPECT_EQ(loaded.session().backend, Backend::simulated);
}

TEST_F(ResultsFile, IsStrictJsonWithItsFormatAndVersion) {
  handmade_results().write_json(path("a.json"));
  const auto doc = nlohmann::json::parse(slurp(path("a.json")));  // throws on bare NaN or Infinity
  EXPECT_EQ(doc["format"], "kscope-results");
  EXPECT_EQ(doc["version"], 1);
  EXPECT_TRUE(doc["kscope_version"].is_string());
  EXPECT_EQ(doc["session"]["mode"], "custom");
  EXPECT_EQ(doc["axes"][1], (nlohmann::json{{"name", "scale"}, {"type", "double"}}));
  EXPECT_EQ(doc["configs"][0][1].dump(), "2.0");
  EXPECT_EQ(doc["summary"][1]["StdDev"], nullptr);
  EXPECT_EQ(doc["summary"][1]["MaxValue"], "Infinity");
  EXPECT_EQ(doc["samples"][3]["Value"], "-Infinity");
  EXPECT_EQ(doc["samples"][0]["Config"], 0);
  EXPECT_EQ(doc["summary"][0]["Normalized"], "reference");
  EXPECT_EQ(doc["summary"][1]["Normalized"], false);
  EXPECT_EQ(doc["samples"][1]["Info"],
            nlohmann::json::parse(R"({"temperature_c": {"real": "Infinity"}, "driver": null, "fused": false})"));
  EXPECT_EQ(doc["summary"][0]["Info"]["temperature_c"].dump(), "2.0");
}

TEST_F(ResultsFile, LoadingRefusesOtherFilesByName) {
  struct Case {
    std::string text;
    std::string message;
  };
  const std::string file = "'" + path("x.json") + "'";
  const Case cases[] = {
      {"{\"format\": \"kscope-results\", \"version\": 2, \"kscope_version\": \"0.9.0\"}",
       file + " is in kscope results format version 2 (written by kscope 0.9.0); this kscope (" KSCOPE_VERSION
              ") reads version 1: update kscope to load it"},
      {"{\"format\": \"kscope-results\", \"version\": 0}",
       file + " is in kscope results format version 0 (written by kscope an unknown version), which this kscope "
              "(" KSCOPE_VERSION ") cannot read: it reads version 1"},
      {"{\"session\": {}, \"summary\": [], \"samples\": []}",
       file + " was written by a kscope from before results files had a format version; load_results cannot read "
              "it. Measure again with this kscope (its \"summary\" and \"samples\" tables remain readable as plain "
              "JSON)"},
      {"{\"context\": {}, \"benchmarks\": []}",
       file + " is Google Benchmark JSON: kscope writes that format for other tools, but loads only its own results "
              "files (written by Results::write_json)"},
      {"[1, 2]", file + " is not a kscope results file (it has no \"format\": \"kscope-results\"); give a file "
                        "written by Results::write_json"},
      {"{\"format\": \"kscope-results\", \"version\": 1}",
       file + " is incomplete (key 'session' not found); give a file written by Results::write_json"},
  };
  for (const Case& k : cases) {
    write_text("x.json", k.text);
    try {
      load_results(path("x.json"));
      ADD_FAILURE() << "loaded: " << k.text;
    } catch (const ConfigError& e) {
      EXPECT_EQ(std::string(e.what()), k.message);
    }
  }
  write_text("x.json", "{\"format\": ");
  try {
    load_results(path("x.json"));
    ADD_FAILURE() << "loaded a truncated file";
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()).rfind(file + " is not JSON that kscope reads (parse error", 0), 0u) << e.what();
  }
}

// Issue 25: a path that is not a readable file is a FileError naming it and the operating system's
// reason (Python's FileNotFoundError, IsADirectoryError), never a C++ stream's exception.
TEST_F(ResultsFile, APathThatIsNoFileIsAFileErrorWithItsReason) {
  const struct {
    std::string path;
    std::errc code;
    std::string message;
  } cases[] = {
      {path("missing.json"), std::errc::no_such_file_or_directory,
       "cannot read '" + path("missing.json") + "': no such file; give a file written by Results::write_json"},
      {path(""), std::errc::is_a_directory,
       "cannot read '" + path("") + "': it is a directory; give a file written by Results::write_json"},
  };
  for (const auto& k : cases) {
    try {
      load_results(k.path);
      ADD_FAILURE() << "loaded " << k.path;
    } catch (const FileError& e) {
      EXPECT_EQ(std::string(e.what()), k.message);
      EXPECT_EQ(e.code(), std::make_error_code(k.code)) << e.code().message();
      EXPECT_EQ(e.path(), k.path);
    }
  }
}

TEST_F(ResultsFile, LoadingNamesTheBadField) {
  handmade_results().write_json(path("a.json"));
  auto doc = nlohmann::json::parse(slurp(path("a.json")));
  const std::string file = "'" + path("x.json") + "'";
  struct Case {
    std::function<void(nlohmann::json&)> spoil;
    std::string message;
  };
  const Case cases[] = {
      {[](auto& d) { d["summary"][1]["Median"] = "fast"; },
       file + ": summary row 1 \"Median\" must be a number, null, \"Infinity\" or \"-Infinity\", not \"fast\""},
      {[](auto& d) { d["samples"][2].erase("Run"); }, file + ": samples row 2 has no \"Run\""},
      {[](auto& d) { d["summary"][0]["Normalized"] = true; },
       file + ": summary row 0 \"Normalized\" must be false or the name of the baseline annotation, not true"},
      {[](auto& d) { d["samples"][0]["Config"] = 3; },
       file + ": samples row 0 \"Config\" is 3, but the file lists 3 configs"},
      {[](auto& d) { d["session"]["backend"] = "cuda"; },
       file + ": \"session\" \"backend\" must be \"from_metrics\" or \"cupti\" or \"events\" or \"counters\" or "
              "\"automatic\" or \"ncu\" or \"test (simulated)\" or \"pcsampling\", not \"cuda\""},
      {[](auto& d) { d["settings"]["adaptive"]["min_runs"] = -1; },
       file + ": \"settings\" \"adaptive\" \"min_runs\" must be a non-negative integer, not -1"},
      {[](auto& d) { d["configs"][1][0] = 1.5; }, file + ": config 1 \"n\" must be an integer, not 1.5"},
      {[](auto& d) { d["configs"][1] = {1}; },
       file + ": config 1 must be a list of 4 values, one per axis, not [1]"},
      {[](auto& d) { d["samples"][1]["Info"].erase("driver"); },
       file + ": samples row 1 \"Info\" has no \"driver\" (a column of \"info_columns\")"},
      {[](auto& d) { d["samples"][1]["Info"]["fused"] = {1, 2}; },
       file + ": samples row 1 \"Info\" \"fused\" must be null, a number, a string, a boolean or {\"real\": "
              "\"NaN\"}, not [1,2]"},
      {[](auto& d) { d["axes"][0]["type"] = "int"; },
       file + ": axis 0 \"type\" must be \"integer\", \"double\", \"string\" or \"bool\", not \"int\""},
  };
  for (const Case& k : cases) {
    auto spoilt = doc;
    k.spoil(spoilt);
    write_text("x.json", spoilt.dump());
    try {
      load_results(path("x.json"));
      ADD_FAILURE() << "loaded: " << k.message;
    } catch (const ConfigError& e) {
      EXPECT_EQ(std::string(e.what()), k.message);
    }
  }
}

// The results file's lists are printed piece by piece: each piece exactly as nlohmann's dump(1)
// prints it inside the document, whatever the value (Grisu2's digits, escapes, invalid UTF-8).
TEST(ResultsFileText, PiecesArePrintedAsTheWholeDocumentWouldBe) {
  using Json = nlohmann::ordered_json;
  std::vector<Json> values{nullptr, true, false, 0, -1, std::int64_t{-9223372036854775807} - 1,
                           std::uint64_t{18446744073709551615u}, 0.0, -0.0, 1.0, 0.1, 1e-300, 5e-324, 1.7976931348623157e308,
                           1e21, 123456789012345680.0, "", "plain text", "quote \" and \\ backslash", "tab\tnew\nline\x01",
                           "\x7f del", "caf\u00e9 \u00b5s", std::string("bad \xff\xfe utf-8"), Json::array(), Json::object(),
                           Json{{"a", 1}, {"b", Json::array({1, "x", Json::object()})}, {"c", {{"d", nullptr}}}},
                           Json::array({Json::array(), Json::array({2.5})})};
  std::mt19937_64 random(7);
  for (int i = 0; i < 2000; ++i) {
    std::uint64_t bits = random();
    double v;
    std::memcpy(&v, &bits, sizeof v);
    if (std::isfinite(v)) values.push_back(v);
    values.push_back(std::uniform_real_distribution<double>(-1e6, 1e6)(random));
  }
  for (const Json& value : values)
    for (std::size_t depth : {0, 2, 3}) {
      std::string nested = value.dump(1, ' ', false, Json::error_handler_t::replace);
      std::string expected;
      for (char c : nested) {
        expected += c;
        if (c == '\n') expected.append(depth, ' ');
      }
      std::string got;
      kscope::detail::append_json(got, value, depth);
      EXPECT_EQ(got, expected) << "depth " << depth;
    }
}

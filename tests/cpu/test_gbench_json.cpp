// Results::write_gbench_json against Google Benchmark's JSON schema (src/json_reporter.cc,
// json_schema_version 1): the keys and types of context and of every benchmark entry, and the values.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "kscope/annotation.hpp"
#include "kscope/errors.hpp"
#include "kscope/profile.hpp"
#include "kscope/testing.hpp"
#include "test_support.hpp"

using namespace kscope;
using nlohmann::json;

namespace {

// 4 runs of "copy" at two configs, 10, 12, 14, 16 ns then 20, 22, 24, 26 ns (after one warm-up each),
// the third run of the second config failing (NaN); a derived bandwidth as a counter.
Results copy_results() {
  kscope::testing::SimulatedBackend backend;
  Settings s;
  s.runs = 4;
  s.verbosity = Verbosity::quiet;
  s.derive_metric = [](const MeasuredValues& m, const Config&) {
    return std::vector<DerivedValue>{{"bandwidth", 1000 / m.front(), "GB/s"}};
  };
  int call = 0;
  return profile_with_backend(Sweep().axis("n", {16, 32}).axis("dtype", {"f32"}), s, [&](const Config& c) {
    const int run = call++ % 5;  // 0 is the warm-up
    annotate("copy", [&] {
      if (c.get<int>("n") == 32 && run == 3) throw std::runtime_error("flaky");
      backend.launch("copy", (c.get<int>("n") == 16 ? 8.0 : 18.0) + 2.0 * run);
    }, {.ignore_failures = true});
  }, backend);
}

// In a directory of its own: tests of this file run in parallel, and other checkouts' too.
json written(const Results& r) {
  const kscope_test::TempDir dir;
  const std::string path = dir.prefix("gbench.json");
  r.write_gbench_json(path);
  std::ifstream in(path);
  json doc = json::parse(in);  // strict JSON
  return doc;
}

void expect_type(const json& object, const char* key, json::value_t type) {
  ASSERT_TRUE(object.contains(key)) << key << " missing in " << object.dump();
  const json& v = object[key];
  const bool ok = type == json::value_t::number_integer ? v.is_number_integer()
                  : type == json::value_t::number_float ? v.is_number()
                                                        : v.type() == type;
  EXPECT_TRUE(ok) << key << " has the wrong type: " << v.dump();
}

}  // namespace

TEST(GbenchJson, ContextHasGoogleBenchmarksKeys) {
  const json c = written(copy_results())["context"];
  expect_type(c, "date", json::value_t::string);
  expect_type(c, "host_name", json::value_t::string);
  expect_type(c, "executable", json::value_t::string);
  expect_type(c, "num_cpus", json::value_t::number_integer);
  expect_type(c, "mhz_per_cpu", json::value_t::number_integer);
  expect_type(c, "caches", json::value_t::array);
  expect_type(c, "load_avg", json::value_t::array);
  expect_type(c, "library_version", json::value_t::string);
  expect_type(c, "library_build_type", json::value_t::string);
  EXPECT_TRUE(c["library_build_type"] == "release" || c["library_build_type"] == "debug");
  EXPECT_EQ(c["json_schema_version"], 1);
  EXPECT_EQ(c["host_name"], "simulated");
  EXPECT_EQ(c["backend"], "test (simulated)");
  EXPECT_EQ(c["cache_control"], "all");
  // Custom context holds strings only, as --benchmark_context gives them.
  for (const char* key : {"kscope_version", "gpu", "gpu_uuid", "driver_version", "backend", "cache_control",
                          "clock_control"})
    expect_type(c, key, json::value_t::string);
  EXPECT_EQ(std::string(c["date"]).size(), std::string("2025-01-31T17:02:11+01:00").size()) << c["date"];
}

// Issue 25: the context described the process writing the file (its date, load, CPUs), not the
// measurement: results loaded elsewhere, later, kept none of it.
TEST(GbenchJson, ContextTellsWhenAndWhereTheMeasurementRan) {
  const Results measured = copy_results();
  const json now = written(measured)["context"];
  EXPECT_EQ(now["date"], measured.session().started_at);
  ASSERT_EQ(measured.session().load_avg.size(), 3u);
  EXPECT_EQ(now["load_avg"][0].get<double>(), measured.session().load_avg[0]);

  const kscope_test::TempDir dir;
  const std::string path = dir.prefix("context.json");
  measured.write_json(path);
  json file = json::parse(std::ifstream(path));
  file["session"]["started_at"] = "2020-01-02T03:04:05+01:00";
  file["session"]["load_avg"] = {1.5, 2.5, 3.5};
  file["session"]["host"] = "gpu-host-17";
  std::ofstream(path) << file.dump();
  const json c = written(load_results(path))["context"];
  EXPECT_EQ(c["date"], "2020-01-02T03:04:05+01:00");
  EXPECT_EQ(c["load_avg"], json({1.5, 2.5, 3.5}));
  EXPECT_EQ(c["host_name"], "gpu-host-17");
  // This machine's CPUs and program are not the measuring host's: unknown, not someone else's.
  EXPECT_EQ(c["num_cpus"], 0);
  EXPECT_EQ(c["mhz_per_cpu"], 0);
  EXPECT_EQ(c["executable"], "");
}

TEST(GbenchJson, EveryEntryHasTheSchemasKeysAndTypes) {
  const json benchmarks = written(copy_results())["benchmarks"];
  ASSERT_EQ(benchmarks.size(), 4u + 4u + 3u + 4u);  // runs and aggregates of each config
  for (const json& e : benchmarks) {
    expect_type(e, "name", json::value_t::string);
    expect_type(e, "family_index", json::value_t::number_integer);
    expect_type(e, "per_family_instance_index", json::value_t::number_integer);
    expect_type(e, "run_name", json::value_t::string);
    expect_type(e, "run_type", json::value_t::string);
    expect_type(e, "repetitions", json::value_t::number_integer);
    expect_type(e, "threads", json::value_t::number_integer);
    expect_type(e, "iterations", json::value_t::number_integer);
    expect_type(e, "real_time", json::value_t::number_float);
    expect_type(e, "cpu_time", json::value_t::number_float);
    EXPECT_EQ(e["time_unit"], "ns");
    expect_type(e, "bandwidth", json::value_t::number_float);  // a counter: a flat number
    if (e["run_type"] == "iteration") {
      expect_type(e, "repetition_index", json::value_t::number_integer);
      EXPECT_FALSE(e.contains("aggregate_name"));
      EXPECT_EQ(e["name"], e["run_name"]);
      EXPECT_EQ(e["iterations"], 1);
    } else {
      ASSERT_EQ(e["run_type"], "aggregate");
      EXPECT_FALSE(e.contains("repetition_index"));
      expect_type(e, "aggregate_name", json::value_t::string);
      EXPECT_EQ(e["name"], std::string(e["run_name"]) + "_" + std::string(e["aggregate_name"]));
      EXPECT_EQ(e["aggregate_unit"], e["aggregate_name"] == "cv" ? "percentage" : "time");
      EXPECT_EQ(e["iterations"], e["repetitions"]);
    }
  }
}

TEST(GbenchJson, RunsAreRepetitionsAndAggregatesAreGoogleBenchmarks) {
  const json b = written(copy_results())["benchmarks"];
  // Config n=16: 10, 12, 14, 16 ns.
  for (int r = 0; r < 4; ++r) {
    EXPECT_EQ(b[r]["name"], "copy/n:16/dtype:f32");
    EXPECT_EQ(b[r]["family_index"], 0);
    EXPECT_EQ(b[r]["per_family_instance_index"], 0);
    EXPECT_EQ(b[r]["repetitions"], 4);
    EXPECT_EQ(b[r]["repetition_index"], r);
    EXPECT_DOUBLE_EQ(b[r]["real_time"].get<double>(), 10.0 + 2 * r);
    EXPECT_DOUBLE_EQ(b[r]["cpu_time"].get<double>(), 10.0 + 2 * r);
    EXPECT_DOUBLE_EQ(b[r]["bandwidth"].get<double>(), 1000 / (10.0 + 2 * r));
  }
  const double stddev = std::sqrt(20.0 / 3);  // deviations -3, -1, 1, 3
  EXPECT_EQ(b[4]["name"], "copy/n:16/dtype:f32_mean");
  EXPECT_DOUBLE_EQ(b[4]["real_time"].get<double>(), 13.0);
  EXPECT_EQ(b[5]["aggregate_name"], "median");
  EXPECT_DOUBLE_EQ(b[5]["real_time"].get<double>(), 13.0);
  EXPECT_EQ(b[6]["aggregate_name"], "stddev");
  EXPECT_DOUBLE_EQ(b[6]["real_time"].get<double>(), stddev);
  EXPECT_EQ(b[7]["aggregate_name"], "cv");
  EXPECT_DOUBLE_EQ(b[7]["real_time"].get<double>(), stddev / 13.0);
  EXPECT_DOUBLE_EQ(b[4]["bandwidth"].get<double>(), (100.0 + 1000.0 / 12 + 1000.0 / 14 + 62.5) / 4);

  // Config n=32: 20, 22, (failed), 26 ns: the failed run is no repetition.
  EXPECT_EQ(b[8]["name"], "copy/n:32/dtype:f32");
  EXPECT_EQ(b[8]["per_family_instance_index"], 1);
  EXPECT_EQ(b[8]["repetitions"], 3);
  EXPECT_DOUBLE_EQ(b[10]["real_time"].get<double>(), 26.0);
  EXPECT_EQ(b[10]["repetition_index"], 2);
  EXPECT_DOUBLE_EQ(b[12]["real_time"].get<double>(), 22.0);  // median
}

TEST(GbenchJson, ResultsWithoutADurationAreRefused) {
  auto names = std::make_shared<const std::vector<std::string>>();
  const std::vector<SampleRow> samples{{"k", 0, 0, "dram__bytes_read.sum", "byte", 4096, "k", NAN, NAN, false}};
  const Results r(SessionInfo{}, {Config(names, {}, 0)}, {}, samples);
  try {
    r.write_gbench_json((std::filesystem::temp_directory_path() / "kscope_gbench_none.json").string());
    FAIL() << "written without a duration";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("these results hold no duration metric"), std::string::npos) << e.what();
  }
}

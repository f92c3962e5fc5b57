// Settings::info_collectors through the engine on the simulated backend: when each scope is called
// and with what, the columns of every output, the checks of the names, and a collector that throws
// (warned and missing by default, a failed sweep with InfoCollectorErrors::raise).
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <iterator>
#include <sstream>
#include <stdexcept>

#include "core/model/log.hpp"
#include "core/model/sample_store.hpp"
#include "kscope/annotation.hpp"
#include "kscope/columns.hpp"
#include "kscope/errors.hpp"
#include "kscope/profile.hpp"
#include "kscope/testing.hpp"
#include "test_support.hpp"

using namespace kscope;
using kscope::testing::SimulatedBackend;
using kscope_test::quiet;

namespace {

// Two annotations per run, as Nsight Python's collector tests.
Body two_annotations(SimulatedBackend& backend) {
  return [&backend](const Config&) {
    { Annotation a("add"); backend.launch("add_kernel", 10); }
    { Annotation m("mul"); backend.launch("mul_kernel", 20); }
  };
}

const Cell& cell(const Table& t, std::size_t row, const std::string& column) { return t.rows[row][t.column(column)]; }

double number(const Table& t, std::size_t row, const std::string& column) {
  const Cell& c = cell(t, row, column);
  if (const auto* d = std::get_if<double>(&c)) return *d;
  if (const auto* i = std::get_if<std::int64_t>(&c)) return static_cast<double>(*i);
  return NAN;
}

// Records the engine's warnings for its lifetime (the logger's sink; stderr again afterwards).
struct WarningRecorder : detail::LogSink {
  std::vector<std::string> messages;
  std::vector<detail::WarningKind> kinds;

  WarningRecorder() { detail::set_log_sink(std::shared_ptr<detail::LogSink>(this, [](detail::LogSink*) {})); }
  ~WarningRecorder() override { detail::set_log_sink(nullptr); }
  void warning(detail::WarningKind kind, const std::string& message) override {
    kinds.push_back(kind);
    messages.push_back(message);
  }
  void line(detail::LogLevel, const std::string&) override {}
  void write(const std::string&) override {}
  bool is_terminal() override { return false; }
};

// The summary row of an annotation at config index `config`.
std::size_t row_of(const Results& r, const std::string& annotation, std::size_t config) {
  for (std::size_t i = 0; i < r.rows().size(); ++i)
    if (r.rows()[i].annotation == annotation && r.rows()[i].config_index == config) return i;
  throw std::runtime_error("no row");
}

}  // namespace

TEST(InfoCollectors, EachScopeIsCalledAtItsPhaseWithItsContext) {
  SimulatedBackend backend;
  Settings s = quiet(3);
  std::vector<std::string> calls;
  const auto record = [&](const std::string& what) {
    return [&calls, what](const CollectionContext& c) -> Cell {
      std::string entry = what;
      if (c.config) entry += " n=" + std::to_string(c.config->get<std::int64_t>("n"));
      if (what == "run" || what == "annotation") entry += " run=" + std::to_string(c.run);
      if (!c.annotation.empty()) entry += " " + c.annotation;
      calls.push_back(entry);
      return static_cast<std::int64_t>(calls.size());
    };
  };
  s.info_collectors = {{"o", CollectionScope::once, record("once")},
                       {"c", CollectionScope::config, record("config")},
                       {"r", CollectionScope::run, record("run")},
                       {"a", CollectionScope::annotation, record("annotation")}};
  s.runs = 2;
  profile_with_backend(Sweep().axis("n", {1, 2}), s, two_annotations(backend), backend);
  const std::vector<std::string> expected{
      "once",  // before anything; the warm-up run of each config calls nothing
      "config n=1",
      "run n=1 run=0", "annotation n=1 run=0 add", "annotation n=1 run=0 mul",
      "run n=1 run=1", "annotation n=1 run=1 add", "annotation n=1 run=1 mul",
      "config n=2",
      "run n=2 run=0", "annotation n=2 run=0 add", "annotation n=2 run=0 mul",
      "run n=2 run=1", "annotation n=2 run=1 add", "annotation n=2 run=1 mul"};
  EXPECT_EQ(calls, expected);
}

TEST(InfoCollectors, ReplayPassesAndBatchesCallEachRunOnce) {
  SimulatedBackend backend;
  backend.set_passes(3);
  backend.set_max_batch_runs(4);
  Settings s = quiet(5);
  int runs = 0, annotations = 0;
  s.info_collectors = {
      {"r", CollectionScope::run, [&](const CollectionContext&) -> Cell { return static_cast<std::int64_t>(++runs); }},
      {"a", CollectionScope::annotation,
       [&](const CollectionContext&) -> Cell { return static_cast<std::int64_t>(++annotations); }}};
  const Results r = profile_with_backend(Sweep(), s, two_annotations(backend), backend);
  EXPECT_EQ(runs, 5);
  EXPECT_EQ(annotations, 10);
  const Table samples = r.samples_table();
  std::vector<double> run_values, annotation_values;
  for (std::size_t i = 0; i < samples.rows.size(); ++i) {
    if (std::get<std::string>(cell(samples, i, "Annotation")) != "add") continue;
    run_values.push_back(number(samples, i, "r"));
    annotation_values.push_back(number(samples, i, "a"));
  }
  EXPECT_EQ(run_values, (std::vector<double>{1, 2, 3, 4, 5}));  // each run its own value, in order
  EXPECT_EQ(annotation_values, (std::vector<double>{1, 3, 5, 7, 9}));
}

// Each region's cells recur run after run, alternating with the other region's: every distinct
// row is held once, not once per run.
TEST(InfoCollectors, RowsThatRecurAreHeldOnce) {
  SimulatedBackend backend;
  Settings s = quiet(50);
  s.info_collectors = {{"a", CollectionScope::annotation,
                        [](const CollectionContext& c) -> Cell { return c.annotation; }}};
  const Results r = profile_with_backend(Sweep().axis("n", {1, 2}), s, two_annotations(backend), backend);
  ASSERT_EQ(r.samples().size(), 2u * 2 * 50);
  EXPECT_EQ(r.samples().store().info_count(), 1u + 2);  // the empty row, "add" and "mul"
  EXPECT_EQ(r.samples()[3].info, std::vector<Cell>{Cell{std::string("mul")}});
}

TEST(InfoCollectors, SummaryColumnsAggregateAsNsightPython) {
  SimulatedBackend backend;
  Settings s = quiet(3);
  int count = 0;
  s.info_collectors = {
      {"version", CollectionScope::once, [](const CollectionContext&) -> Cell { return std::string("v1"); }},
      {"exec_order", CollectionScope::annotation,
       [&](const CollectionContext&) -> Cell { return static_cast<std::int64_t>(++count); }},
      {"label", CollectionScope::run,
       [](const CollectionContext& c) -> Cell { return "run" + std::to_string(c.run); }},
      {"ratio", CollectionScope::config, [](const CollectionContext& c) -> Cell {
         return 0.5 * static_cast<double>(c.config->get<std::int64_t>("n"));
       }}};
  const Results r = profile_with_backend(Sweep().axis("n", {512, 1024}), s, two_annotations(backend), backend);
  const std::vector<std::string> summary{"version",  "exec_order_Avg", "exec_order_Std", "exec_order_Min",
                                         "exec_order_Max", "label",      "ratio_Avg",      "ratio_Std",
                                         "ratio_Min",      "ratio_Max"};
  EXPECT_EQ(r.info_columns().summary, summary);
  EXPECT_EQ(r.info_columns().samples, (std::vector<std::string>{"version", "exec_order", "label", "ratio"}));
  const Table t = r.summary_table();
  ASSERT_EQ(t.columns.size(), 2 + summary_columns().size() + summary.size());
  EXPECT_EQ(t.columns.back(), "ratio_Max");  // after the schema's columns
  // Nsight Python's numbers: add gets 1, 3, 5 and mul 2, 4, 6 in the first config; 7.. in the second.
  const std::size_t add = row_of(r, "add", 0), mul = row_of(r, "mul", 0), add2 = row_of(r, "add", 1);
  EXPECT_EQ(number(t, add, "exec_order_Min"), 1);
  EXPECT_EQ(number(t, add, "exec_order_Max"), 5);
  EXPECT_EQ(number(t, add, "exec_order_Avg"), 3);
  EXPECT_EQ(number(t, add, "exec_order_Std"), 2);  // n - 1
  EXPECT_EQ(number(t, mul, "exec_order_Min"), 2);
  EXPECT_EQ(number(t, add2, "exec_order_Min"), 7);
  EXPECT_EQ(std::get<std::string>(cell(t, add, "version")), "v1");
  EXPECT_EQ(std::get<std::string>(cell(t, add, "label")), "run0");  // text: the first run's value
  EXPECT_EQ(number(t, add2, "ratio_Avg"), 512);
  // One value: no spread.
  Settings once = quiet(1);
  once.info_collectors = {{"v", CollectionScope::run, [](const CollectionContext&) -> Cell { return 3.0; }}};
  const Table single = profile_with_backend(Sweep(), once, two_annotations(backend), backend).summary_table();
  EXPECT_TRUE(std::holds_alternative<std::monostate>(cell(single, 0, "v_Std")));
}

TEST(InfoCollectors, DerivedMetricRowsCarryTheValues) {
  SimulatedBackend backend;
  Settings s = quiet(2);
  s.derive_metric = [](const MeasuredValues& v, const Config&) {
    return std::vector<DerivedValue>{{"double", 2 * v.front(), "ns"}};
  };
  s.info_collectors = {{"v", CollectionScope::config, [](const CollectionContext&) -> Cell { return 7.0; }}};
  const Results r = profile_with_backend(Sweep(), s, two_annotations(backend), backend);
  ASSERT_EQ(r.rows().size(), 4u);
  for (const auto& row : r.rows()) EXPECT_EQ(std::get<double>(row.info.at(0)), 7.0) << row.metric;
}

TEST(InfoCollectors, EveryOutputHasTheColumns) {
  SimulatedBackend backend;
  Settings s = quiet(2);
  s.info_collectors = {{"gpu_temp_c", CollectionScope::run, [](const CollectionContext& c) -> Cell {
                          return static_cast<std::int64_t>(40 + c.run);
                        }}};
  const Results r = profile_with_backend(Sweep(), s, two_annotations(backend), backend);
  std::ostringstream console;
  console << r;
  EXPECT_NE(console.str().find("gpu_temp_c_Avg"), std::string::npos) << console.str();
  EXPECT_NE(console.str().find("40.5"), std::string::npos) << console.str();
  const std::string dir = ::testing::TempDir();
  r.write_all(dir + "info_");
  const auto read = [](const std::string& path) {
    std::ifstream in(path);
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  EXPECT_NE(read(dir + "info_summary.csv").find(",gpu_temp_c_Avg,gpu_temp_c_Std,gpu_temp_c_Min,gpu_temp_c_Max"),
            std::string::npos);
  EXPECT_NE(read(dir + "info_samples.csv").find(",gpu_temp_c"), std::string::npos);
  const std::string json = read(dir + "info_results.json");
  EXPECT_NE(json.find("\"gpu_temp_c_Max\": 41"), std::string::npos) << json;
  EXPECT_NE(json.find("\"gpu_temp_c\": 40"), std::string::npos) << json;
}

TEST(InfoCollectors, NamesAreChecked) {
  SimulatedBackend backend;
  const auto refusal = [&](std::vector<InfoCollector> collectors, Backend b = Backend::from_metrics) {
    Settings s = quiet();
    s.backend = b;
    s.info_collectors = std::move(collectors);
    try {
      profile_with_backend(Sweep().axis("n", {1}), s, two_annotations(backend), backend);
    } catch (const ConfigError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  const auto value = [](const CollectionContext&) -> Cell { return 1.0; };
  EXPECT_NE(refusal({{"t", CollectionScope::run, value}, {"t", CollectionScope::once, value}})
                .find("Duplicate info collector name 't'"),
            std::string::npos);
  EXPECT_NE(refusal({{"NumRuns", CollectionScope::once, value}})
                .find("Info collector name 'NumRuns' collides with a reserved profiler column"),
            std::string::npos);
  EXPECT_NE(refusal({{"Run", CollectionScope::once, value}}).find("reserved"), std::string::npos);  // samples
  EXPECT_NE(refusal({{"n", CollectionScope::once, value}}).find("collides with the config axis 'n'"), std::string::npos);
  EXPECT_NE(refusal({{"t", CollectionScope::run, value}, {"t_Min", CollectionScope::run, value}})
                .find("'t_Min' collides with a column of collector 't'"),
            std::string::npos);
  EXPECT_NE(refusal({{"", CollectionScope::once, value}}).find("Settings::info_collectors has a collector without a name"),
            std::string::npos);
  EXPECT_NE(refusal({{"t", CollectionScope::once, nullptr}}).find("collector 't' without a collect function"),
            std::string::npos);
  EXPECT_NE(refusal({{"t", CollectionScope::once, value}}, Backend::ncu)
                .find("Settings::info_collectors cannot be used with Backend::ncu"),
            std::string::npos);
  EXPECT_EQ(refusal({{"t", CollectionScope::once, value}}), "accepted");
}

// Nsight Python's handling, the default: the value is missing where the collector failed, one
// warning per collector, and the sweep goes on.
TEST(InfoCollectors, AThrowingCollectorLeavesItsValueMissingAndWarnsOnce) {
  SimulatedBackend backend;
  Settings s = quiet(3);
  int calls = 0;
  s.info_collectors = {{"sensor", CollectionScope::run, [&](const CollectionContext&) -> Cell {
                          if (++calls % 2 == 0) throw std::runtime_error("sensor busy");
                          return 7.0;
                        }},
                       {"driver", CollectionScope::once, [](const CollectionContext&) -> Cell {
                          throw std::runtime_error("no driver");
                        }}};
  WarningRecorder warnings;
  const Results r = profile_with_backend(Sweep().axis("n", {1, 2}), s, two_annotations(backend), backend);
  ASSERT_EQ(warnings.messages.size(), 2u);  // once per collector, not per failure
  EXPECT_EQ(warnings.messages[0],
            "Info collector 'driver' (once scope) raised no driver. Its value is missing where it fails; "
            "Settings::info_collector_errors = InfoCollectorErrors::raise stops the sweep instead");
  EXPECT_EQ(warnings.messages[1].rfind("Info collector 'sensor' (run scope) raised sensor busy.", 0), 0u);
  EXPECT_EQ(warnings.kinds, (std::vector<detail::WarningKind>{detail::WarningKind::run, detail::WarningKind::run}));
  const Table samples = r.samples_table();
  ASSERT_EQ(samples.rows.size(), 2u * 3u * 2u);
  EXPECT_DOUBLE_EQ(number(samples, 0, "sensor"), 7.0);                              // call 1
  EXPECT_TRUE(std::holds_alternative<std::monostate>(cell(samples, 2, "sensor")));  // call 2 failed
  EXPECT_TRUE(std::holds_alternative<std::monostate>(cell(samples, 0, "driver")));
  EXPECT_DOUBLE_EQ(number(r.summary_table(), row_of(r, "add", 0), "sensor_Avg"), 7.0);  // over the runs it gave
}

TEST(InfoCollectors, WithRaiseAThrowingCollectorFailsTheSweepNamingItAndKeepsWhatWasMeasured) {
  SimulatedBackend backend;
  Settings s = quiet(3);
  s.info_collector_errors = InfoCollectorErrors::raise;
  int calls = 0;
  s.info_collectors = {{"sensor", CollectionScope::annotation, [&](const CollectionContext& c) -> Cell {
                          if (++calls == 9) throw std::runtime_error("sensor unplugged at " + c.annotation);
                          return 1.0;
                        }}};
  try {
    profile_with_backend(Sweep().axis("n", {1, 2}), s, two_annotations(backend), backend);
    FAIL() << "expected SweepError";
  } catch (const SweepError& e) {
    const std::string m = e.what();
    // Config 1: 3 runs x 2 annotations; config 2's run 2 opens the 9th annotation.
    EXPECT_NE(m.find("config 2/2 (n=2) failed in run 2, in info collector 'sensor' (annotation scope): "
                     "sensor unplugged at add"),
              std::string::npos)
        << m;
    EXPECT_EQ(e.partial_results().rows().size(), 4u);  // config 1, and config 2's run 1
    EXPECT_EQ(e.partial_results().info_columns().summary.front(), "sensor_Avg");
  }
  EXPECT_FALSE(backend.session_open());
  calls = 0;
  s.info_collectors = {{"driver", CollectionScope::once, [&](const CollectionContext&) -> Cell {
                          throw std::runtime_error("no driver");
                        }}};
  try {
    profile_with_backend(Sweep().axis("n", {1, 2}), s, two_annotations(backend), backend);
    FAIL() << "expected SweepError";
  } catch (const SweepError& e) {
    EXPECT_NE(std::string(e.what()).find("config 1/2 (n=1) failed in info collector 'driver' (once scope), before its "
                                         "first run: no driver"),
              std::string::npos)
        << e.what();
    EXPECT_TRUE(e.partial_results().rows().empty());
  }
}

TEST(InfoCollectors, NoCollectorsNoColumns) {
  SimulatedBackend backend;
  const Results r = profile_with_backend(Sweep(), quiet(), two_annotations(backend), backend);
  EXPECT_TRUE(r.info_columns().summary.empty());
  EXPECT_EQ(r.summary_table().columns.size(), 1 + summary_columns().size());
}

// The recipe "How to add a statistic" (docs/architecture.md), walked with a toy statistic the test
// registers itself: a name and a function over a row's valid samples become a summary column of a
// sweep on the simulated backend, in its tables and its results file.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <span>
#include <sstream>

#include "kscope/annotation.hpp"
#include "kscope/columns.hpp"
#include "kscope/profile.hpp"
#include "kscope/results.hpp"
#include "kscope/statistics.hpp"
#include "kscope/testing.hpp"
#include "test_support.hpp"

using namespace kscope;
using kscope::testing::SimulatedBackend;
using kscope_test::error_of;
using kscope_test::in_child;

namespace {

// Kernels of 10, 20, 30, 40 ns, in turn, in every config.
Results sweep() {
  SimulatedBackend backend;
  int launches = 0;
  return profile_with_backend(Sweep().axis("n", {1, 2}), kscope_test::quiet(4), [&](const Config&) {
    Annotation a("k");
    backend.launch("kern", 10.0 * (1 + launches++ % 4));
  }, backend);
}

double midrange(std::span<const double> sorted) { return (sorted.front() + sorted.back()) / 2; }

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

TEST(RegisteredStatistics, AToyStatisticIsASummaryColumnOfASweep) {
  const std::string problems = in_child([] {
    std::string found;
    const auto expect = [&](bool holds, const std::string& what) {
      if (!holds) found += what + "\n";
    };
    register_summary_statistic({"Midrange", midrange});

    const auto& columns = summary_columns();
    const auto at = [&](const std::string& name) {
      return std::find_if(columns.begin(), columns.end(), [&](const ColumnSpec& c) { return c.name == name; }) -
             columns.begin();
    };
    expect(at("Midrange") == at("P80") + 1 && at("Outliers") == at("Midrange") + 1,
           "Midrange is the column after kscope's own statistics, before Outliers");

    const Results results = sweep();
    const Table table = results.summary_table();
    expect(results.rows().size() == 2, "a row per config");
    for (std::size_t i = 0; i < results.rows().size(); ++i) {
      const SampleStatistics& stats = results.rows()[i].stats;
      expect(stats.min == 10 && stats.max == 40, "the samples are 10 to 40 ns");
      expect(statistic(stats, "Midrange") == 25, "statistic() reads Midrange: " + std::to_string(statistic(stats, "Midrange")));
      expect(stats.added == std::vector<double>{25}, "SampleStatistics::added holds Midrange");
      expect(table.rows[i][table.column("Midrange")] == Cell{25.0}, "the summary table's Midrange cell is 25");
    }

    std::stringstream file;
    results.write_json(file);
    const Results loaded = load_results(file, "results.json");
    expect(statistic(loaded.rows()[0].stats, "Midrange") == 25, "the results file keeps Midrange");

    expect(std::isnan(summarize(std::vector<double>{NAN}, 1).added.at(0)), "Midrange of no valid sample is NaN");
    return found;
  });
  EXPECT_EQ(problems, "");
}

TEST(RegisteredStatistics, ABadStatisticIsRefusedWithTheReason) {
  const std::string problems = in_child([] {
    std::string found;
    const auto expect = [&](const std::string& message, const std::string& part) {
      if (!has(message, part)) found += "'" + message + "' lacks '" + part + "'\n";
    };
    expect(error_of([] { register_summary_statistic({"Median", midrange}); }),
           "the statistic 'Median' has the name of a summary column already; choose another name");
    expect(error_of([] { register_summary_statistic({"NumRuns", midrange}); }), "'NumRuns' has the name of a summary column");
    expect(error_of([] { register_summary_statistic({"", midrange}); }), "a statistic needs a name (its summary column) and a function");
    expect(error_of([] { register_summary_statistic({"Nothing", {}}); }), "a statistic needs a name");
    expect(error_of([] { register_summary_statistic({"Low", midrange, &SampleStatistics::min}); }), "leave `field` null");
    expect(error_of([] { statistic(SampleStatistics{}, "P99"); }), "no summary statistic is named 'P99'; the statistics: MinValue, MaxValue, Median");
    return found;
  });
  EXPECT_EQ(problems, "");
}

// The recipe "How to add a kind of derived result" (docs/architecture.md), walked with a toy kind
// the test defines itself: its column table and a format row make its table (the console, CSV and
// JSON writers' record), its typed column specs (what Python types the DataFrame by, and what reads
// its CSV back) and its file under an output prefix; nothing else is written by hand. Then the
// kinds kscope has are held to the same model: their tables are their column tables, and their
// files the rows of their formats.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/csv.hpp"
#include "core/model/derived_columns.hpp"
#include "core/files/output_formats.hpp"
#include "core/decisions/race.hpp"
#include "kscope/annotation.hpp"
#include "kscope/compare.hpp"
#include "kscope/detail/enum_names.hpp"
#include "kscope/evaluate.hpp"
#include "kscope/profile.hpp"
#include "kscope/testing.hpp"
#include "kscope/tune.hpp"
#include "test_support.hpp"

using namespace kscope;
using kscope::testing::SimulatedBackend;

namespace {

// ---- The toy kind: per config, the annotation with the lowest median duration -------------------

struct FastestRow {
  std::size_t config_index = 0;
  std::string annotation;
  double median_ns = NAN;
  std::size_t annotations = 0;  // how many were measured
};

class Fastest {
 public:
  explicit Fastest(Results measurements);
  const Results& measurements() const { return measurements_; }
  const std::vector<FastestRow>& rows() const { return rows_; }
  Table table() const;

 private:
  Results measurements_;
  std::vector<FastestRow> rows_;
};

// Step 1: the column table.
const detail::DerivedColumns<Fastest, FastestRow>& fastest_columns() {
  using R = FastestRow;
  using T = ColumnType;
  static const detail::DerivedColumns<Fastest, R> table{
      {
          {"Fastest", T::text, [](const Fastest&, const R& r) { return Cell{r.annotation}; }},
          {"MedianNs", T::real, [](const Fastest&, const R& r) { return Cell{r.median_ns}; }},
          // A column the readable view leaves out.
          detail::hidden<Fastest, R>(
              {"Annotations", T::integer, [](const Fastest&, const R& r) { return detail::count_cell(r.annotations); }}),
      },
      0,
      [](const Fastest& f, const R& r) { return f.measurements().configs().at(r.config_index).values(); }};
  return table;
}

// Step 2: a format row.
const std::vector<detail::DerivedFormat<Fastest>>& fastest_formats() {
  static const std::vector<detail::DerivedFormat<Fastest>> formats{
      {"fastest table CSV", "fastest.csv", &detail::write_table_csv<Fastest, &Fastest::table>},
  };
  return formats;
}

// The kind's own logic: what it derives from the measurements.
Fastest::Fastest(Results measurements) : measurements_(std::move(measurements)) {
  for (std::size_t c = 0; c < measurements_.configs().size(); ++c) {
    FastestRow row{c, "", std::numeric_limits<double>::infinity(), 0};
    for (const SummaryRow& s : measurements_.rows()) {
      if (s.config_index != c) continue;
      ++row.annotations;
      if (s.stats.median < row.median_ns) row = {c, s.annotation, s.stats.median, row.annotations};
    }
    rows_.push_back(row);
  }
}

Table Fastest::table() const { return fastest_columns().table(*this, rows_, measurements_.axis_names()); }

// Two annotations a config: "slow" takes 3 times n ns, "fast" n ns.
Results two_annotations() {
  SimulatedBackend backend;
  return profile_with_backend(Sweep().axis("n", {100, 200}), kscope_test::quiet(3), [&](const Config& c) {
    const double n = static_cast<double>(c.get<std::int64_t>("n"));
    {
      Annotation a("slow");
      backend.launch("k", 3 * n);
    }
    Annotation a("fast");
    backend.launch("k", n);
  }, backend);
}

std::vector<std::string> names_of(const std::vector<ColumnSpec>& specs) {
  std::vector<std::string> names;
  for (const ColumnSpec& s : specs) names.push_back(s.name);
  return names;
}

}  // namespace

TEST(DerivedResults, AToyKindIsItsColumnTableAndAFormatRow) {
  const Fastest fastest(two_annotations());

  // The table: the config axes, then the columns, a row per config.
  const Table table = fastest.table();
  EXPECT_EQ(table.columns, (std::vector<std::string>{"n", "Fastest", "MedianNs", "Annotations"}));
  ASSERT_EQ(table.rows.size(), 2u);
  EXPECT_EQ(table.rows[0], (std::vector<Cell>{std::int64_t{100}, std::string("fast"), 100.0, std::int64_t{2}}));
  EXPECT_EQ(table.rows[1], (std::vector<Cell>{std::int64_t{200}, std::string("fast"), 200.0, std::int64_t{2}}));

  // The readable view: the axes and the columns shown.
  const Table view = fastest_columns().view(fastest, fastest.rows(), fastest.measurements().axis_names());
  EXPECT_EQ(view.columns, (std::vector<std::string>{"n", "Fastest", "MedianNs"}));
  EXPECT_EQ(view.rows[1], (std::vector<Cell>{std::int64_t{200}, std::string("fast"), 200.0}));
  EXPECT_EQ(fastest_columns().shown(), (std::vector<std::string>{"Fastest", "MedianNs"}));

  // The specs: what Python's one conversion types the DataFrame's columns by.
  const std::vector<ColumnSpec> specs = fastest_columns().specs();
  ASSERT_EQ(specs.size(), 3u);
  EXPECT_EQ(to_string(specs[0].type), "text");
  EXPECT_EQ(to_string(specs[1].type), "real");
  EXPECT_EQ(to_string(specs[2].type), "integer");

  // The file: written under an output prefix from the format row, read back typed by the specs.
  const kscope_test::TempDir dir;
  const std::string prefix = dir.prefix("toy_");
  EXPECT_EQ(detail::derived_prefix_files(fastest_formats()), std::vector<std::string>{"fastest.csv"});
  detail::write_derived_files(fastest, fastest_formats(), prefix);
  std::ostringstream expected;
  write_csv(table, expected);
  const std::string written = kscope_test::text_of(prefix + "fastest.csv");
  EXPECT_EQ(written, expected.str());
  std::istringstream in(written);
  detail::CsvRecordReader reader(in);
  detail::CsvRecord header, first;
  ASSERT_TRUE(reader.next(header) && reader.next(first));
  for (std::size_t i = 0; i < specs.size(); ++i)
    EXPECT_EQ(detail::parse_cell(first.fields.at(i + 1), specs[i].type), table.rows[0][i + 1]) << specs[i].name;
}

TEST(DerivedResults, TheKindsOfKscopeAreTheirColumnTables) {
  // An evaluation's, a race's and a comparison's tables are the axes and their <kind>_columns(),
  // and name their enumerations' cells from the name table.
  SimulatedBackend backend;
  const Sweep sweep = Sweep().axis("n", {1, 2, 3});
  Settings s = kscope_test::quiet(10);
  RaceOptions options;
  options.first_runs = 4;
  options.final_runs = 6;
  const Race race = tune_with_backend(sweep, s, [&](const Config& c) {
    Annotation a("k");
    backend.launch("k", 100.0 * static_cast<double>(c.get<std::int64_t>("n")));
  }, options, backend);
  std::vector<std::string> race_header{"n"};
  for (const std::string& name : names_of(race_columns())) race_header.push_back(name);
  EXPECT_EQ(race.table().columns, race_header);
  const auto outcomes = detail::enum_names(RaceOutcome{});
  for (const auto& row : race.table().rows) {
    const std::string outcome = std::get<std::string>(row.at(1));
    EXPECT_TRUE(std::any_of(outcomes.begin(), outcomes.end(), [&](const auto& e) { return outcome == e.name; }))
        << outcome;
  }
  EXPECT_EQ(detail::derived_prefix_files(detail::race_formats()), std::vector<std::string>{"race.csv"});

  const Comparison comparison = compare(race.measurements(), race.measurements());
  std::vector<std::string> comparison_header = names_of(comparison_columns());
  comparison_header.insert(comparison_header.begin() + 1, "n");  // after Annotation
  EXPECT_EQ(comparison.to_table().columns, comparison_header);

  // A comparison's files are the rows of its format table: its table as CSV, its JSON's rows the
  // table's columns.
  EXPECT_EQ(detail::derived_prefix_files(detail::comparison_formats()),
            (std::vector<std::string>{"comparison.csv", "comparison.json"}));
  const kscope_test::TempDir dir;
  comparison.write_all(dir.prefix("c_"));
  std::ostringstream csv;
  write_csv(comparison.to_table(), csv);
  EXPECT_EQ(kscope_test::text_of(dir.prefix("c_") + "comparison.csv"), csv.str());
  const auto saved = nlohmann::ordered_json::parse(kscope_test::text_of(dir.prefix("c_") + "comparison.json"));
  std::vector<std::string> keys;
  for (const auto& [key, value] : saved["rows"].at(0).items()) keys.push_back(key);
  EXPECT_EQ(keys, comparison_header);

  const auto evaluation = names_of(evaluation_columns());
  EXPECT_EQ(evaluation.front(), "Verdict");
  EXPECT_EQ(names_of(finding_columns()), (std::vector<std::string>{"Side", "Finding", "Runs", "Detail"}));
}

TEST(DerivedResults, TheirEnumerationsAreOnTheNameTable) {
  // to_string reads the table; a name read back (evaluation files, --direction) is found in it.
  for (const auto& [value, name] : detail::enum_names(Verdict{})) EXPECT_EQ(to_string(value), name);
  for (const auto& [value, name] : detail::enum_names(EvaluationVerdict{})) EXPECT_EQ(to_string(value), name);
  for (const auto& [value, name] : detail::enum_names(Side{})) EXPECT_EQ(to_string(value), name);
  for (const auto& [value, name] : detail::enum_names(RaceOutcome{})) EXPECT_EQ(to_string(value), name);
  for (const auto& [value, name] : detail::enum_names(Gate{})) EXPECT_EQ(to_string(value), name);
  EXPECT_EQ(to_string(MetricDirection::lower_is_better), "lower is better");
  EXPECT_EQ(detail::enum_named<MetricDirection>("higher"), MetricDirection::higher_is_better);
  EXPECT_EQ(detail::enum_named<MetricDirection>("up"), std::nullopt);
  EXPECT_EQ(detail::enum_choices<MetricDirection>(), "'lower', 'higher' or 'undefined'");
}

TEST(DerivedResults, AResultFileTheCallerWritesAfterTheSessionIsNotWrittenBeforeIt) {
  // An evaluation's results file is its own (measurements and verdicts), written once: the
  // session's writing leaves it to the caller.
  const Results results = two_annotations();
  const kscope_test::TempDir dir;
  const std::string prefix = dir.prefix("skip_");
  detail::write_result_files(results, prefix, false, {detail::kResultsFile});
  EXPECT_FALSE(std::filesystem::exists(prefix + detail::kResultsFile));
  EXPECT_TRUE(std::filesystem::exists(prefix + "summary.csv"));
}

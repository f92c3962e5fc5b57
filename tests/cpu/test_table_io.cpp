#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "base/csv.hpp"
#include "io/json_table.hpp"
#include "kscope/errors.hpp"
#include "kscope/table.hpp"

namespace {

using kscope::Cell;
using kscope::Table;

constexpr double nan = std::numeric_limits<double>::quiet_NaN();
constexpr double inf = std::numeric_limits<double>::infinity();

std::string csv(const Table& table) {
  std::ostringstream out;
  kscope::write_csv(table, out);
  return out.str();
}

std::string json(const Table& table) {
  std::ostringstream out;
  kscope::write_json(table, out);
  return out.str();
}

std::string console(const Table& table) {
  std::ostringstream out;
  kscope::write_console(table, out);
  return out.str();
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// Display columns of UTF-8 text, counted independently of the writers' helper.
std::size_t code_points(const std::string& text) {
  std::size_t n = 0;
  for (unsigned char byte : text) n += (byte & 0xC0) != 0x80;
  return n;
}

Table mixed_table() {
  return Table{{"Annotation", "n", "AvgValue", "Stable", "Note"},
               {{std::string("copy"), std::int64_t{1024}, 12.3456, true, std::monostate{}},
                {std::string("scale"), std::int64_t{-7}, nan, false, std::string("x")}}};
}

TEST(TableColumn, FindsTheIndex) {
  const Table table = mixed_table();
  EXPECT_EQ(table.column("Annotation"), 0u);
  EXPECT_EQ(table.column("Note"), 4u);
}

TEST(TableColumn, MissingColumnNamesItAndTheAvailableOnes) {
  const Table table = mixed_table();
  try {
    table.column("Median");
    FAIL() << "expected kscope::Error";
  } catch (const kscope::Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("'Median'"), std::string::npos) << what;
    EXPECT_NE(what.find("'Annotation', 'n', 'AvgValue', 'Stable', 'Note'"), std::string::npos)
        << what;
  }
}

TEST(Csv, HeaderAndCellKinds) {
  EXPECT_EQ(csv(mixed_table()),
            "Annotation,n,AvgValue,Stable,Note\n"
            "copy,1024,12.3456,true,\n"
            "scale,-7,,false,x\n");
}

TEST(Csv, QuotesFieldsThatNeedIt) {
  const Table table{{"a,b", "plain"},
                    {{std::string("say \"hi\""), std::string("no quotes")},
                     {std::string("two\nlines"), std::string("cr\rhere")}}};
  EXPECT_EQ(csv(table),
            "\"a,b\",plain\n"
            "\"say \"\"hi\"\"\",no quotes\n"
            "\"two\nlines\",\"cr\rhere\"\n");
}

TEST(Csv, InfinitiesAreSpelledOut) {
  const Table table{{"v"}, {{inf}, {-inf}}};
  EXPECT_EQ(csv(table), "v\ninf\n-inf\n");
}

TEST(Csv, LoneEmptyFieldIsQuotedSoTheLineSurvives) {
  const Table table{{"v"}, {{std::monostate{}}, {nan}, {std::string()}}};
  EXPECT_EQ(csv(table), "v\n\"\"\n\"\"\n\"\"\n");
}

TEST(Csv, DoublesRoundTripExactly) {
  const std::vector<double> values{0.1,     1.0 / 3.0, 2.0 / 3.0, 1e-300, 5e-324, 1.7976931348623157e308,
                                   -0.0,    123456789.123456789,   6.02214076e23,  0.30000000000000004,
                                   1e21,    4.35};
  Table table{{"v"}, {}};
  for (double v : values) table.rows.push_back({v});
  const auto lines = lines_of(csv(table));
  ASSERT_EQ(lines.size(), values.size() + 1);
  for (std::size_t i = 0; i < values.size(); ++i) {
    const double parsed = std::strtod(lines[i + 1].c_str(), nullptr);
    EXPECT_EQ(parsed, values[i]) << lines[i + 1];
    EXPECT_EQ(std::signbit(parsed), std::signbit(values[i])) << lines[i + 1];
  }
  EXPECT_EQ(lines[1], "0.1");  // shortest form, not 0.10000000000000001
}

TEST(Csv, Int64Extremes) {
  const Table table{{"v"},
                    {{std::numeric_limits<std::int64_t>::min()},
                     {std::numeric_limits<std::int64_t>::max()}}};
  EXPECT_EQ(csv(table), "v\n-9223372036854775808\n9223372036854775807\n");
}

TEST(Csv, RaggedTableIsRejected) {
  const Table table{{"a", "b"}, {{std::int64_t{1}}}};
  EXPECT_THROW(csv(table), kscope::Error);
  EXPECT_THROW(json(table), kscope::Error);
  EXPECT_THROW(console(table), kscope::Error);
}

TEST(Csv, DuplicateColumnIsRejected) {
  EXPECT_THROW(csv(Table{{"a", "a"}, {}}), kscope::Error);
}

TEST(Csv, RecordsAreReadBackOneAtATimeWithTheirEnds) {
  const Table table{{"a,b", "plain"},
                    {{std::string("say \"hi\""), std::string("two\nlines")},
                     {std::string("cr\rhere"), std::monostate{}},
                     {std::string(""), std::string("\"")}}};
  const std::string text = csv(table) + "x,\r\n" + "cut,\"off";  // a CRLF line, then a record cut off
  std::istringstream in(text);
  kscope::detail::CsvRecordReader reader(in);
  kscope::detail::CsvRecord record;
  std::vector<std::vector<std::string>> fields;
  std::vector<std::size_t> ends;
  while (reader.next(record)) {
    fields.push_back(record.fields);
    ends.push_back(record.end);
  }
  const std::vector<std::vector<std::string>> expected{
      {"a,b", "plain"}, {"say \"hi\"", "two\nlines"}, {"cr\rhere", ""}, {"", "\""}, {"x", ""}};
  EXPECT_EQ(fields, expected);
  ASSERT_EQ(ends.size(), expected.size());
  const std::string lines = csv(table);
  EXPECT_EQ(ends[3], lines.size());
  EXPECT_EQ(ends[4], lines.size() + 4);
  EXPECT_EQ(text.substr(0, ends[0]), "\"a,b\",plain\n");
  EXPECT_FALSE(reader.next(record));  // the end stays the end

  std::ifstream missing("/nonexistent/kscope.csv");
  kscope::detail::CsvRecordReader none(missing);
  EXPECT_FALSE(none.next(record));
}

TEST(Json, ParsesBackWithValuesAndNulls) {
  Table table = mixed_table();
  table.rows.push_back({std::string("inf"), std::int64_t{0}, inf, true, -inf});
  const auto doc = nlohmann::json::parse(json(table));  // throws on bare NaN or Infinity
  ASSERT_TRUE(doc.is_array());
  ASSERT_EQ(doc.size(), 3u);
  EXPECT_EQ(doc[0]["Annotation"], "copy");
  EXPECT_TRUE(doc[0]["n"].is_number_integer());
  EXPECT_EQ(doc[0]["n"], 1024);
  EXPECT_EQ(doc[0]["AvgValue"].get<double>(), 12.3456);
  EXPECT_EQ(doc[0]["Stable"], true);
  EXPECT_TRUE(doc[0]["Note"].is_null());
  EXPECT_EQ(doc[1]["n"], -7);
  EXPECT_TRUE(doc[1]["AvgValue"].is_null());
  EXPECT_EQ(doc[1]["Stable"], false);
  EXPECT_TRUE(doc[2]["AvgValue"].is_null());
  EXPECT_TRUE(doc[2]["Note"].is_null());
}

TEST(Json, KeysKeepColumnOrder) {
  const Table table{{"zeta", "alpha", "mid"},
                    {{std::int64_t{1}, std::int64_t{2}, std::int64_t{3}}}};
  const auto doc = nlohmann::ordered_json::parse(json(table));
  std::vector<std::string> keys;
  for (const auto& item : doc[0].items()) keys.push_back(item.key());
  EXPECT_EQ(keys, (std::vector<std::string>{"zeta", "alpha", "mid"}));
}

TEST(Json, DoublesRoundTripAndStringsAreEscaped) {
  const Table table{{"v", "s"}, {{0.1 + 0.2, std::string("quote \" backslash \\ tab \t")}}};
  const auto doc = nlohmann::json::parse(json(table));
  EXPECT_EQ(doc[0]["v"].get<double>(), 0.1 + 0.2);
  EXPECT_EQ(doc[0]["s"], "quote \" backslash \\ tab \t");
}

TEST(Json, EmptyTableIsAnEmptyArray) {
  const auto doc = nlohmann::json::parse(json(Table{{"a"}, {}}));
  EXPECT_TRUE(doc.is_array());
  EXPECT_TRUE(doc.empty());
}

TEST(Json, InvalidUtf8DoesNotThrow) {
  const Table table{{"s"}, {{std::string("bad \xff byte")}}};
  const auto doc = nlohmann::json::parse(json(table));
  EXPECT_EQ(doc[0]["s"], "bad \xEF\xBF\xBD byte");  // U+FFFD
}

TEST(Json, TableToJsonEmbedsInALargerDocument) {
  nlohmann::ordered_json doc;
  doc["session"] = {{"backend", "test"}};
  doc["summary"] = kscope::detail::table_to_json(mixed_table());
  ASSERT_EQ(doc["summary"].size(), 2u);
  EXPECT_EQ(doc["summary"][1]["Note"], "x");
  EXPECT_TRUE(doc["summary"][1]["AvgValue"].is_null());
}

TEST(Console, AlignsNumbersRightAndTextLeft) {
  const Table table{{"Name", "Value", "Count"},
                    {{std::string("a"), 12.3456, std::int64_t{5}},
                     {std::string("longer name"), 1234567.0, std::int64_t{12345}}}};
  const auto lines = lines_of(console(table));
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_EQ(lines[0], "Name             Value  Count");
  EXPECT_EQ(lines[1], "-----------  ---------  -----");
  EXPECT_EQ(lines[2], "a                12.35      5");
  EXPECT_EQ(lines[3], "longer name  1.235e+06  12345");
}

TEST(Console, MissingValuesAndBools) {
  const Table table{{"ok", "v", "note"},
                    {{true, nan, std::monostate{}}, {false, 2.5, std::string("fine")}}};
  const auto lines = lines_of(console(table));
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_EQ(lines[0], "ok     v  note");
  EXPECT_EQ(lines[2], "yes    -  -");
  EXPECT_EQ(lines[3], "no   2.5  fine");
}

TEST(Console, NumberFormats) {
  const Table table{{"v"}, {{15234.7}, {0.000123456}, {-inf}, {1e-7}, {std::int64_t{-3}}}};
  const auto lines = lines_of(console(table));
  ASSERT_EQ(lines.size(), 7u);
  EXPECT_EQ(lines[2], "    15235");  // durations in ns stay plain digits
  EXPECT_EQ(lines[3], "0.0001235");
  EXPECT_EQ(lines[4], "     -inf");
  EXPECT_EQ(lines[5], "    1e-07");
  EXPECT_EQ(lines[6], "       -3");
}

TEST(Console, LongTextIsCutWithAnEllipsis) {
  const std::string long_name(60, 'k');
  const Table table{{"Kernel", "n"}, {{long_name, std::int64_t{1}}}};
  const auto lines = lines_of(console(table));
  ASSERT_EQ(lines.size(), 3u);
  const std::string cut = std::string(47, 'k') + "\u2026";
  EXPECT_EQ(lines[2], cut + "  1");
  EXPECT_EQ(code_points(lines[1]), 48u + 2 + 1);  // the rule matches the display width
}

TEST(Console, EllipsisCutsBetweenCodePoints) {
  std::string greek;
  for (int i = 0; i < 50; ++i) greek += "\u03bb";  // two bytes each
  const Table table{{"s", "n"}, {{greek, std::int64_t{1}}, {std::string("ab"), std::int64_t{2}}}};
  const auto lines = lines_of(console(table));
  ASSERT_EQ(lines.size(), 4u);
  std::string expected;
  for (int i = 0; i < 47; ++i) expected += "\u03bb";
  EXPECT_EQ(lines[2], expected + "\u2026  1");
  // Padding counts columns, not bytes: both rows put n in the same column.
  EXPECT_EQ(code_points(lines[2]), code_points(lines[3]));
}

TEST(Console, ControlCharactersDoNotBreakLines) {
  const Table table{{"s"}, {{std::string("two\nlines")}}};
  const auto lines = lines_of(console(table));
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[2], "two lines");
}

TEST(Console, HeaderOnlyTable) {
  EXPECT_EQ(console(Table{{"a", "bb"}, {}}), "a  bb\n-  --\n");
}

}  // namespace

#pragma once
// The tables of the results derived from measurements (an evaluation and its findings, a race, a
// comparison, a line sampling's tables), each defined once as the engine's summary table is
// (core/model/column_cells.hpp): its columns' names, types and cells, and where the config axes go.
// The Table made from it is what the console, CSV and JSON writers print, and its readable view
// the columns it marks shown; its column specs are what the public <kind>_columns() functions
// return and what the Python binding types the DataFrame's columns by (one conversion,
// kscope/_results.py); its files are rows of its format table (core/files/output_formats.hpp:
// DerivedFormat), and a file read back reads its rows through the columns' reads
// (io/json_columns.hpp).
#include <cstddef>
#include <functional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/model/cell_values.hpp"
#include "kscope/columns.hpp"
#include "kscope/detail/config_cells.hpp"
#include "kscope/table.hpp"
#include "kscope/value.hpp"

namespace kscope::detail {

// A column of a derived result: its cell of one row, given the whole result (the options a cell
// reads, the configs a row points into).
template <typename Result, typename Row>
struct DerivedColumn {
  using CellOf = std::function<Cell(const Result&, const Row&)>;
  using Read = std::function<bool(Row&, const Cell&)>;

  DerivedColumn(const char* name, ColumnType type, CellOf cell, Read read = nullptr, std::string expected = "")
      : name(name), type(type), cell(std::move(cell)), read(std::move(read)), expected(std::move(expected)) {}

  const char* name;
  ColumnType type;
  CellOf cell;
  // The inverse of cell, for the rows a file holds (read back through its columns,
  // io/json_columns.hpp): false for a cell the column never holds. Empty for a cell made from the
  // whole result (the GPU of the row's session), which the result read back makes again.
  Read read;
  std::string expected;  // what a cell read back must be, where its type does not say it all
  bool shown = true;     // in the readable view (the console's, Python's str())
};

// A column that is a member of the row, read back into it (core/model/cell_values.hpp): a real, a
// count, a text, a flag, an optional count, an enumeration by its name.
template <typename Result, typename Row, typename Member>
DerivedColumn<Result, Row> member_column(const char* name, ColumnType type, Member Row::*member) {
  DerivedColumn<Result, Row> column(
      name, type, [member](const Result&, const Row& row) { return value_cell(row.*member); },
      [member](Row& row, const Cell& cell) { return read_cell(cell, row.*member); });
  if constexpr (std::is_enum_v<Member>) column.expected = "one of " + enum_choices<Member>("\"");
  return column;
}

// A column the table and its files hold, which the readable view leaves out (the longer texts,
// what a reader rarely needs to judge a row).
template <typename Result, typename Row>
DerivedColumn<Result, Row> hidden(DerivedColumn<Result, Row> column) {
  column.shown = false;
  return column;
}

template <typename Result, typename Row>
struct DerivedColumns {
  std::vector<DerivedColumn<Result, Row>> columns;
  std::size_t axes_at = 0;  // the config axes come before columns[axes_at]
  // The config values of a row, one per axis.
  std::function<std::vector<Value>(const Result&, const Row&)> config;

  // The columns, axes left out: the kind's <kind>_columns().
  std::vector<ColumnSpec> specs() const {
    std::vector<ColumnSpec> out;
    for (const auto& c : columns) out.push_back({c.name, c.type});
    return out;
  }

  // The names of the columns the readable view shows, axes left out.
  std::vector<std::string> shown() const {
    std::vector<std::string> out;
    for (const auto& c : columns)
      if (c.shown) out.emplace_back(c.name);
    return out;
  }

  Table table(const Result& result, const std::vector<Row>& rows, const std::vector<std::string>& axes) const {
    return table_of(result, rows, axes, false);
  }

  // The readable view (the console's): the table of the axes and the columns shown.
  Table view(const Result& result, const std::vector<Row>& rows, const std::vector<std::string>& axes) const {
    return table_of(result, rows, axes, true);
  }

 private:
  Table table_of(const Result& result, const std::vector<Row>& rows, const std::vector<std::string>& axes,
                 bool shown_only) const {
    std::vector<const DerivedColumn<Result, Row>*> in;
    for (const auto& c : columns)
      if (c.shown || !shown_only) in.push_back(&c);
    // The axes go where they go among all the columns: before the first column in it from axes_at on.
    std::size_t axes_in = 0;
    while (axes_in < in.size() && in[axes_in] < columns.data() + axes_at) ++axes_in;
    Table t;
    for (std::size_t i = 0; i <= in.size(); ++i) {
      if (i == axes_in) t.columns.insert(t.columns.end(), axes.begin(), axes.end());
      if (i < in.size()) t.columns.emplace_back(in[i]->name);
    }
    for (const Row& row : rows) {
      std::vector<Cell> cells;
      cells.reserve(t.columns.size());
      for (std::size_t i = 0; i <= in.size(); ++i) {
        if (i == axes_in)
          for (const Value& v : config(result, row)) cells.push_back(to_cell(v));
        if (i < in.size()) cells.push_back(in[i]->cell(result, row));
      }
      t.rows.push_back(std::move(cells));
    }
    return t;
  }
};

// The comma-separated names of a list (findings, flags).
template <typename List, typename Name>
std::string joined_names(const List& list, Name name) {
  std::string out;
  for (const auto& item : list) out += (out.empty() ? "" : ",") + name(item);
  return out;
}

}  // namespace kscope::detail

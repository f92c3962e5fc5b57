#pragma once
// The tables of the results derived from measurements (an evaluation and its findings, a race, a
// comparison), each defined once as the engine's summary table is (core/model/column_cells.hpp): its
// columns' names, types and cells, and where the config axes go. The Table made from it is what
// the console, CSV and JSON writers print; its column specs are what the public
// <kind>_columns() functions return and what the Python binding types the DataFrame's columns by
// (one conversion, kscope/_results.py); its files are rows of its format table
// (core/files/output_formats.hpp: DerivedFormat).
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "kscope/columns.hpp"
#include "kscope/detail/config_cells.hpp"
#include "kscope/table.hpp"
#include "kscope/value.hpp"

namespace kscope::detail {

// A column of a derived result: its cell of one row, given the whole result (the options a cell
// reads, the configs a row points into).
template <typename Result, typename Row>
struct DerivedColumn {
  const char* name;
  ColumnType type;
  std::function<Cell(const Result&, const Row&)> cell;
};

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

  Table table(const Result& result, const std::vector<Row>& rows, const std::vector<std::string>& axes) const {
    Table t;
    const auto place_axes = [&](std::size_t at) {
      if (at == axes_at) t.columns.insert(t.columns.end(), axes.begin(), axes.end());
    };
    for (std::size_t i = 0; i < columns.size(); ++i) {
      place_axes(i);
      t.columns.emplace_back(columns[i].name);
    }
    place_axes(columns.size());
    for (const Row& row : rows) {
      std::vector<Cell> cells;
      cells.reserve(t.columns.size());
      const auto place_config = [&](std::size_t at) {
        if (at != axes_at) return;
        for (const Value& v : config(result, row)) cells.push_back(to_cell(v));
      };
      for (std::size_t i = 0; i < columns.size(); ++i) {
        place_config(i);
        cells.push_back(columns[i].cell(result, row));
      }
      place_config(columns.size());
      t.rows.push_back(std::move(cells));
    }
    return t;
  }
};

// Cells of the common kinds.
inline Cell count_cell(std::size_t n) { return Cell{static_cast<std::int64_t>(n)}; }

// The comma-separated names of a list (findings, flags).
template <typename List, typename Name>
std::string joined_names(const List& list, Name name) {
  std::string out;
  for (const auto& item : list) out += (out.empty() ? "" : ",") + name(item);
  return out;
}

}  // namespace kscope::detail

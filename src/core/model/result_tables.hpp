#pragma once
// The rows of Results' long-format tables, cell by cell in the schema's order (core/model/column_cells.*):
// the tables Results builds (summary_table, samples_table) and the writers that stream the rows to
// a file without building the table (io/results_writers.cpp).
#include <string>
#include <vector>

#include "core/model/column_cells.hpp"
#include "kscope/results.hpp"

namespace kscope::detail {

// Annotation and the config axes, then the schema's columns, then the info collectors'.
template <typename Row>
std::vector<std::string> table_columns(const std::vector<Config>& configs,
                                       const std::vector<ColumnDefinition<Row>>& definitions,
                                       const std::vector<std::string>& info) {
  std::vector<std::string> columns{"Annotation"};
  if (!configs.empty())
    for (const auto& a : configs.front().names()) columns.push_back(a);
  for (const auto& d : definitions) columns.push_back(d.spec.name);
  columns.insert(columns.end(), info.begin(), info.end());
  return columns;
}

// Calls `take` with each row's cells, in the order of table_columns. `session_of`: the session
// facts of a config's rows.
// `rows`: SummaryRows, or Samples (each SampleRow made as it is read).
template <typename Row, typename Rows, typename SessionOf, typename Take>
void for_each_row(const std::vector<Config>& configs, const SessionOf& session_of, const Rows& rows,
                  const std::vector<ColumnDefinition<Row>>& definitions, const Take& take) {
  std::vector<Cell> cells;
  for (const Row& row : rows) {
    cells.clear();
    cells.emplace_back(row.annotation);
    for (const auto& v : configs[row.config_index].values()) cells.push_back(to_cell(v));
    const SessionInfo& session = session_of(row.config_index);
    for (const auto& d : definitions) cells.push_back(d.cell(row, session));
    cells.insert(cells.end(), row.info.begin(), row.info.end());
    take(cells);
  }
}

}  // namespace kscope::detail

#pragma once
// The cell of every column of kscope::summary_columns() and sample_columns(), in their order.
#include <functional>
#include <vector>

#include "kscope/columns.hpp"
#include "kscope/results.hpp"

namespace kscope::detail {

template <typename Row>
struct ColumnDefinition {
  ColumnSpec spec;
  std::function<Cell(const Row&, const SessionInfo&)> cell;
  // The inverse of cell, for the sample columns a resumed sweep reads back from disk; empty for
  // the session facts (the same on every row, checked once) and the summary columns.
  std::function<void(Row&, const Cell&)> read = {};
};

// A config value as a table cell.
Cell to_cell(const Value& v);

const std::vector<ColumnDefinition<SummaryRow>>& summary_column_definitions();
const std::vector<ColumnDefinition<SampleRow>>& sample_column_definitions();

// Annotation, the config axes, sample_columns(), then the info collectors' columns:
// Results::samples_table, and the rows a streamed sweep appends to its samples.csv.
Table samples_table(const std::vector<SampleRow>& rows, const std::vector<Config>& configs, const SessionInfo& session,
                    const std::vector<std::string>& info_columns);

}  // namespace kscope::detail

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
};

// A config value as a table cell.
Cell to_cell(const Value& v);

const std::vector<ColumnDefinition<SummaryRow>>& summary_column_definitions();
const std::vector<ColumnDefinition<SampleRow>>& sample_column_definitions();

}  // namespace kscope::detail

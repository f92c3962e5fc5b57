// The engine's tables and cells as Python objects.
#pragma once

#include <cstddef>
#include <vector>

#include "bindings.hpp"
#include "kscope/kscope.hpp"

namespace kscope_python {

py::object to_python(const kscope::Cell& cell);

// [(name, type name)] of the columns.
py::list column_specs(const std::vector<kscope::ColumnSpec>& columns);

// {column: [cells]} in the table's column order, and the config index of every row.
py::tuple columns(const kscope::Table& table, std::vector<std::size_t> config_indices);

// The config index of each row.
template <typename Rows>
std::vector<std::size_t> config_indices(const Rows& rows) {
  std::vector<std::size_t> out;
  for (const auto& r : rows) out.push_back(r.config_index);
  return out;
}

}  // namespace kscope_python

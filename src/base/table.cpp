#include "kscope/table.hpp"

#include <algorithm>
#include <set>

#include "base/text.hpp"
#include "kscope/errors.hpp"

namespace kscope {
namespace {

std::string quoted_list(const std::vector<std::string>& names) {
  std::string list;
  for (const auto& name : names) {
    if (!list.empty()) list += ", ";
    list += "'" + name + "'";
  }
  return list.empty() ? "(none)" : list;
}

}  // namespace

std::size_t Table::column(const std::string& name) const {
  const auto found = std::find(columns.begin(), columns.end(), name);
  if (found == columns.end()) {
    throw Error("table has no column '" + name + "'; available columns: " + quoted_list(columns));
  }
  return static_cast<std::size_t>(found - columns.begin());
}

namespace detail {

void check_table_shape(const Table& table) {
  std::set<std::string> seen;
  for (const auto& name : table.columns) {
    if (!seen.insert(name).second) {
      throw Error("table column '" + name + "' appears twice; column names must be unique");
    }
  }
  for (std::size_t r = 0; r < table.rows.size(); ++r) check_row_shape(r, table.rows[r].size(), table.columns.size());
}

void check_row_shape(std::size_t row, std::size_t cells, std::size_t columns) {
  if (cells != columns)
    throw Error("table row " + std::to_string(row) + " has " + std::to_string(cells) + " cells but the table has " +
                std::to_string(columns) + " columns");
}

}  // namespace detail
}  // namespace kscope

#include <cmath>
#include <ostream>

#include "base/text.hpp"
#include "io/json_table.hpp"
#include "kscope/table.hpp"

namespace kscope {
namespace detail {
namespace {

nlohmann::ordered_json cell_to_json(const Cell& cell) {
  return std::visit(
      Overloaded{
          [](std::monostate) { return nlohmann::ordered_json(nullptr); },
          [](std::int64_t value) { return nlohmann::ordered_json(value); },
          [](double value) {
            return std::isfinite(value) ? nlohmann::ordered_json(value)
                                        : nlohmann::ordered_json(nullptr);
          },
          [](const std::string& value) { return nlohmann::ordered_json(value); },
          [](bool value) { return nlohmann::ordered_json(value); },
      },
      cell);
}

}  // namespace

nlohmann::ordered_json table_to_json(const Table& table) {
  check_table_shape(table);
  auto rows = nlohmann::ordered_json::array();
  for (const auto& row : table.rows) {
    auto object = nlohmann::ordered_json::object();
    for (std::size_t i = 0; i < row.size(); ++i) object[table.columns[i]] = cell_to_json(row[i]);
    rows.push_back(std::move(object));
  }
  return rows;
}

}  // namespace detail

void write_json(const Table& table, std::ostream& out) {
  // Invalid UTF-8 in a string (a mangled kernel name, say) becomes U+FFFD instead of throwing.
  out << detail::table_to_json(table).dump(2, ' ', false,
                                           nlohmann::ordered_json::error_handler_t::replace)
      << '\n';
}

}  // namespace kscope

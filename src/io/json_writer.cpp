#include <ostream>

#include "base/text.hpp"
#include "core/model/cell_json.hpp"
#include "io/json_table.hpp"
#include "kscope/table.hpp"

namespace kscope {
namespace detail {

nlohmann::ordered_json table_to_json(const Table& table) {
  check_table_shape(table);
  auto rows = nlohmann::ordered_json::array();
  for (const auto& row : table.rows) {
    auto object = nlohmann::ordered_json::object();
    for (std::size_t i = 0; i < row.size(); ++i) object[table.columns[i]] = cell_json(row[i], NonFinite::null);
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

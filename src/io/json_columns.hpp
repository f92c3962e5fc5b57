#pragma once
// Table columns in kscope's own JSON files: each cell by its column's type (a real as the file's
// reals are written: null for NaN), read back through the column's inverse of its cell. The
// results file's summary and sample rows (core/model/column_cells.*) and a derived result's rows
// (core/model/derived_columns.hpp: an evaluation's, in its results file) are their columns this way.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/model/cell_json.hpp"
#include "core/model/derived_columns.hpp"
#include "core/model/json_fields.hpp"

namespace kscope::detail::json_fields {

// What a cell of this type is in the file, for the message that refuses another.
inline const char* expected(ColumnType type) {
  switch (type) {
    case ColumnType::text: return "a string";
    case ColumnType::integer: return "a non-negative integer";
    case ColumnType::optional_integer: return "a non-negative integer or null";
    case ColumnType::real: return "a number, null, \"Infinity\" or \"-Infinity\"";
    case ColumnType::boolean: return "true or false";
    case ColumnType::optional_boolean: return "true, false or null";
    case ColumnType::baseline: return "false or the name of the baseline annotation";
  }
  return "?";
}

inline Written column_json(const Cell& cell) {
  if (const double* v = std::get_if<double>(&cell)) return encode(*v);
  return cell_json(cell);
}

// The cell of a column of this type the JSON holds (null: an empty one); nullopt for another.
inline std::optional<Cell> column_cell(const Read& j, ColumnType type) {
  if (j.is_null()) return Cell{};
  switch (type) {
    case ColumnType::real:
      if (const auto v = real_from_json(j)) return Cell{*v};
      return std::nullopt;
    case ColumnType::integer:
    case ColumnType::optional_integer:
      if (j.is_number_unsigned() && j.get<std::uint64_t>() <= INT64_MAX) return Cell{j.get<std::int64_t>()};
      return std::nullopt;
    default: {
      const auto cell = cell_from_json(j);
      if (cell && (std::holds_alternative<std::string>(*cell) || std::holds_alternative<bool>(*cell))) return cell;
      return std::nullopt;
    }
  }
}

// The field of a column: `cell` (empty: a field only read) written by the column's type, read
// back through `read` (empty: a field only written). `expected`: what its cell must be, where
// the type does not say it all.
template <typename Row>
Field<Row> column_field(std::string key, ColumnType type, std::function<Cell(const Row&)> cell,
                        std::function<bool(Row&, const Cell&)> read, const std::string& expected_cell) {
  Field<Row> field{std::move(key), {}, {}};
  if (cell) field.write = [cell](const Row& row) { return column_json(cell(row)); };
  if (read)
    field.read = [type, read, expected_cell](Row& row, const Read& value, const std::string& where) {
      const auto c = column_cell(value, type);
      if (!c || !read(row, *c)) bad_value(where, expected_cell.empty() ? expected(type) : expected_cell.c_str(), value);
    };
  return field;
}

// A derived result's rows in its file: its config's index ("Config"), then every column of its
// table. `written`: the result whose rows these fields write; without it, they read rows back (a
// column without a read, made from the whole result, is made again by the result read back).
template <typename Result, typename Row>
std::vector<Field<Row>> derived_fields(const DerivedColumns<Result, Row>& columns, const Result* written = nullptr) {
  std::vector<Field<Row>> fields{field<Row>("Config", [](auto& r) -> auto& { return r.config_index; })};
  for (const DerivedColumn<Result, Row>& c : columns.columns) {
    std::function<Cell(const Row&)> cell;
    if (written) cell = [written, &c](const Row& row) { return c.cell(*written, row); };
    fields.push_back(column_field<Row>(c.name, c.type, cell, written ? std::function<bool(Row&, const Cell&)>{} : c.read, c.expected));
  }
  return fields;
}

}  // namespace kscope::detail::json_fields

#pragma once
// A row's values as table cells and back: what the column tables (core/model/column_cells.*,
// core/model/derived_columns.hpp) show of a row, and read back into it from kscope's own files.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "kscope/detail/enum_names.hpp"
#include "kscope/table.hpp"

namespace kscope::detail {

inline Cell count_cell(std::size_t n) { return Cell{static_cast<std::int64_t>(n)}; }

// The cell of a row's value of each kind: a real as it is (NaN included), a count as an integer,
// an optional one empty where unset, an enumeration by its name on the name table.
inline Cell value_cell(double v) { return Cell{v}; }
inline Cell value_cell(std::size_t n) { return count_cell(n); }
inline Cell value_cell(bool v) { return Cell{v}; }
inline Cell value_cell(const std::string& v) { return Cell{v}; }
inline Cell value_cell(const std::optional<bool>& v) { return v ? Cell{*v} : Cell{}; }
inline Cell value_cell(const std::optional<std::uint64_t>& v) {
  return v ? Cell{static_cast<std::int64_t>(*v)} : Cell{};
}
template <typename E>
  requires requires(E v) { enum_names(v); }
Cell value_cell(E v) {
  return Cell{enum_name(v)};
}

// The inverses: false for a cell the value never has. An empty cell is a NaN real, or an unset
// optional.
inline bool read_cell(const Cell& c, double& out) {
  if (std::holds_alternative<std::monostate>(c)) out = NAN;
  else if (const double* v = std::get_if<double>(&c)) out = *v;
  else return false;
  return true;
}
inline bool read_cell(const Cell& c, std::size_t& out) {
  const std::int64_t* v = std::get_if<std::int64_t>(&c);
  if (v && *v >= 0) out = static_cast<std::size_t>(*v);
  return v && *v >= 0;
}
inline bool read_cell(const Cell& c, std::string& out) {
  const std::string* v = std::get_if<std::string>(&c);
  if (v) out = *v;
  return v;
}
inline bool read_cell(const Cell& c, bool& out) {
  const bool* v = std::get_if<bool>(&c);
  if (v) out = *v;
  return v;
}
inline bool read_cell(const Cell& c, std::optional<bool>& out) {
  if (std::holds_alternative<std::monostate>(c)) out.reset();
  else if (const bool* v = std::get_if<bool>(&c)) out = *v;
  else return false;
  return true;
}
inline bool read_cell(const Cell& c, std::optional<std::uint64_t>& out) {
  if (std::holds_alternative<std::monostate>(c)) {
    out.reset();
    return true;
  }
  std::size_t v = 0;
  if (!read_cell(c, v)) return false;
  out = v;
  return true;
}
template <typename E>
  requires requires(E v) { enum_names(v); }
bool read_cell(const Cell& c, E& out) {
  const std::string* name = std::get_if<std::string>(&c);
  const auto value = name ? enum_named<E>(*name) : std::nullopt;
  if (value) out = *value;
  return value.has_value();
}

}  // namespace kscope::detail

#include <charconv>
#include <cmath>
#include <ostream>
#include <string>
#include <string_view>

#include "base/csv.hpp"
#include "base/text.hpp"
#include "kscope/table.hpp"

namespace kscope {
namespace {

std::string format_double(double value) {
  if (std::isnan(value)) return {};
  // Shortest text that parses back to the same double; to_chars spells infinities inf / -inf.
  char buffer[32];
  const auto result = std::to_chars(buffer, buffer + sizeof buffer, value);
  return std::string(buffer, result.ptr);
}

std::string cell_text(const Cell& cell) {
  return std::visit(
      detail::Overloaded{
          [](std::monostate) { return std::string(); },
          [](std::int64_t value) { return std::to_string(value); },
          [](double value) { return format_double(value); },
          [](const std::string& value) { return value; },
          [](bool value) { return std::string(value ? "true" : "false"); },
      },
      cell);
}

// RFC 4180: a field holding a separator, a quote or a line break is quoted, quotes doubled.
// A lone empty field is quoted too: unquoted it would be a blank line, which readers skip.
void append_field(std::string& out, std::string_view field, bool alone_on_line) {
  const bool quote = field.find_first_of(",\"\r\n") != std::string_view::npos ||
                     (alone_on_line && field.empty());
  if (!quote) {
    out += field;
    return;
  }
  out += '"';
  for (char ch : field) {
    if (ch == '"') out += '"';
    out += ch;
  }
  out += '"';
}

template <class Fields, class ToText>
void write_line(std::ostream& out, const Fields& fields, ToText to_text) {
  std::string line;
  for (std::size_t i = 0; i < fields.size(); ++i) {
    if (i > 0) line += ',';
    append_field(line, to_text(fields[i]), fields.size() == 1);
  }
  line += '\n';
  out << line;
}

}  // namespace

void write_csv(const Table& table, std::ostream& out) {
  detail::check_table_shape(table);
  if (table.columns.empty()) return;  // no header to write, and rows without cells
  write_line(out, table.columns, [](const std::string& name) { return name; });
  for (const auto& row : table.rows) write_line(out, row, cell_text);
}

namespace detail {

void append_csv_field(std::string& out, const Cell& cell, bool alone_on_line) {
  append_field(out, cell_text(cell), alone_on_line);
}

void write_csv_row(const std::vector<Cell>& cells, std::ostream& out) { write_line(out, cells, cell_text); }

}  // namespace detail

}  // namespace kscope

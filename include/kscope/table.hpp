#pragma once
// A column-named table of typed cells: the one record every output format (console, CSV, JSON,
// pandas) is written from.
#include <cstdint>
#include <iosfwd>
#include <string>
#include <variant>
#include <vector>

namespace kscope {

// A missing value is std::monostate: empty in CSV, null in JSON, NaN/NA in pandas.
using Cell = std::variant<std::monostate, std::int64_t, double, std::string, bool>;

// A table as kscope writes it (CSV, JSON, the console): column names and rows of cells.
struct Table {
  std::vector<std::string> columns;      // the names, in order
  std::vector<std::vector<Cell>> rows;  // each a cell per column

  std::size_t column(const std::string& name) const;  // index; throws Error if absent
};

// RFC 4180 CSV; doubles with 17 significant digits where needed, NaN and null as empty fields.
void write_csv(const Table& table, std::ostream& out);
// A JSON array of objects, one per row. Strict JSON: NaN and infinities become null.
void write_json(const Table& table, std::ostream& out);
// Aligned, human-readable text, one line per row.
void write_console(const Table& table, std::ostream& out);

}  // namespace kscope

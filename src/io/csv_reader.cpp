#include <charconv>
#include <cmath>

#include "io/csv.hpp"

namespace kscope::detail {

std::vector<CsvRecord> read_csv_records(std::string_view text) {
  std::vector<CsvRecord> records;
  CsvRecord record;
  std::string field;
  bool quoted = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char ch = text[i];
    if (quoted) {
      if (ch != '"') {
        field += ch;
      } else if (i + 1 < text.size() && text[i + 1] == '"') {
        field += '"';
        ++i;
      } else {
        quoted = false;
      }
    } else if (ch == '"') {
      quoted = true;
    } else if (ch == ',') {
      record.fields.push_back(std::move(field));
      field.clear();
    } else if (ch == '\n') {
      if (!field.empty() && field.back() == '\r') field.pop_back();
      record.fields.push_back(std::move(field));
      field.clear();
      record.end = i + 1;
      records.push_back(std::move(record));
      record = {};
    } else {
      field += ch;
    }
  }
  return records;  // what follows the last line break is an unfinished record
}

std::optional<Cell> parse_cell(const std::string& text, ColumnType type) {
  const auto whole = [&](auto& value) {
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    return error == std::errc() && end == text.data() + text.size();
  };
  switch (type) {
    case ColumnType::text:
      return Cell{text};
    case ColumnType::integer: {
      if (text.empty()) return Cell{};
      std::int64_t value = 0;
      return whole(value) ? std::optional<Cell>(Cell{value}) : std::nullopt;
    }
    case ColumnType::real: {
      if (text.empty()) return Cell{};
      double value = 0;
      return whole(value) ? std::optional<Cell>(Cell{value}) : std::nullopt;
    }
    case ColumnType::boolean:
    case ColumnType::optional_boolean:
      if (text == "true" || text == "false") return Cell{text == "true"};
      if (text.empty() && type == ColumnType::optional_boolean) return Cell{};
      return std::nullopt;
    case ColumnType::baseline:
      return text == "false" ? Cell{false} : Cell{text};
  }
  return std::nullopt;
}

}  // namespace kscope::detail

#include <charconv>
#include <cmath>
#include <istream>
#include <string>

#include "base/csv.hpp"

namespace kscope::detail {

bool CsvRecordReader::next(CsvRecord& record) {
  if (too_long_) return false;
  std::streambuf& in = *in_.rdbuf();
  std::size_t fields = 0, offset = offset_;
  std::string dropped;  // the fields beyond max_fields_ + 1
  // The fields' strings are reused from record to record: reading allocates only for longer ones.
  const auto start_field = [&]() -> std::string& {
    if (fields > max_fields_) {
      dropped.clear();
      return dropped;
    }
    if (fields == record.fields.size()) record.fields.emplace_back();
    std::string& field = record.fields[fields++];
    field.clear();
    return field;
  };
  std::string* field = &start_field();
  bool quoted = false;
  for (int c; (c = in.sbumpc()) != std::char_traits<char>::eof();) {
    if (++offset - offset_ > kMaxRecordBytes) {
      too_long_ = true;
      return false;
    }
    const char ch = static_cast<char>(c);
    if (quoted) {
      if (ch != '"') {
        *field += ch;
      } else if (in.sgetc() == '"') {
        *field += '"';
        in.sbumpc();
        ++offset;
      } else {
        quoted = false;
      }
    } else if (ch == '"') {
      quoted = true;
    } else if (ch == ',') {
      field = &start_field();
    } else if (ch == '\n') {
      if (!field->empty() && field->back() == '\r') field->pop_back();
      record.fields.resize(fields);
      record.end = offset_ = offset;
      return true;
    } else {
      *field += ch;
    }
  }
  offset_ = offset;
  return false;  // what follows the last line break is an unfinished record
}

std::optional<Cell> parse_cell(const std::string& text, ColumnType type) {
  const auto whole = [&](auto& value) {
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    return error == std::errc() && end == text.data() + text.size();
  };
  switch (type) {
    case ColumnType::text:
      return Cell{text};
    case ColumnType::integer:
    case ColumnType::optional_integer: {
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

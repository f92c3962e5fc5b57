#include "backends/ncu/ncu_csv.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdlib>

#include "kscope/errors.hpp"

namespace kscope::ncu {
namespace {

struct Record {
  std::vector<std::string> fields;
  std::size_t line;  // 1-based line where it starts
};

// RFC 4180 records: quoted fields may hold commas, doubled quotes and line breaks.
std::vector<Record> split_records(const std::string& text, std::size_t first_line, const std::string& source) {
  std::vector<Record> records;
  Record current{{}, first_line};
  std::string field;
  bool quoted = false, field_started = false;
  std::size_t line = first_line;
  const auto end_record = [&] {
    current.fields.push_back(std::move(field));
    field.clear();
    field_started = false;
    const bool blank = current.fields.size() == 1 && current.fields[0].empty();
    if (!blank) records.push_back(std::move(current));
    current = Record{{}, line};
  };
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
        field += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        if (c == '\n') ++line;
        field += c;
      }
    } else if (c == '"' && !field_started) {
      quoted = field_started = true;
    } else if (c == ',') {
      current.fields.push_back(std::move(field));
      field.clear();
      field_started = false;
    } else if (c == '\n') {
      ++line;
      end_record();
    } else if (c != '\r') {
      field += c;
      field_started = true;
    }
  }
  if (quoted) throw BackendError(source + ": unterminated quoted field starting in line " + std::to_string(current.line));
  if (field_started || !current.fields.empty()) end_record();
  return records;
}

// Offset of the first line that is not one of ncu's "==..." messages, and its line number.
std::pair<std::size_t, std::size_t> skip_messages(const std::string& text) {
  std::size_t offset = 0, line = 1;
  while (offset < text.size() && text.compare(offset, 2, "==") == 0) {
    const std::size_t eol = text.find('\n', offset);
    if (eol == std::string::npos) return {text.size(), line};
    offset = eol + 1;
    ++line;
  }
  return {offset, line};
}

}  // namespace

std::optional<std::size_t> NcuCsv::find(const std::string& column) const {
  const auto it = std::find(columns.begin(), columns.end(), column);
  if (it == columns.end()) return std::nullopt;
  return static_cast<std::size_t>(it - columns.begin());
}

NcuCsv parse_ncu_csv(const std::string& text, const std::string& source) {
  const auto [offset, first_line] = skip_messages(text);
  std::vector<Record> records = split_records(text.substr(offset), first_line, source);
  if (records.empty()) throw BackendError(source + " holds no CSV table (empty export)");
  NcuCsv csv;
  csv.columns = std::move(records.front().fields);
  if (std::find(csv.columns.begin(), csv.columns.end(), "ID") == csv.columns.end())
    throw BackendError(source + ": line " + std::to_string(records.front().line) +
                       " is not the header of ncu's raw page (no \"ID\" column)");
  std::size_t next = 1;
  // The units row has an empty ID; a kernel row has a number there.
  if (records.size() > 1 && records[1].fields.size() == csv.columns.size() && records[1].fields[*csv.find("ID")].empty()) {
    csv.units = std::move(records[1].fields);
    next = 2;
  } else {
    csv.units.assign(csv.columns.size(), "");
  }
  for (std::size_t r = next; r < records.size(); ++r) {
    if (records[r].fields.size() != csv.columns.size())
      throw BackendError(source + ": line " + std::to_string(records[r].line) + " has " +
                         std::to_string(records[r].fields.size()) + " fields, the header " +
                         std::to_string(csv.columns.size()));
    csv.rows.push_back(std::move(records[r].fields));
  }
  return csv;
}

std::optional<double> parse_ncu_number(const std::string& field) {
  std::string digits;
  for (char c : field)
    if (c != ',') digits += c;
  if (digits.empty()) return std::nullopt;
  errno = 0;
  char* end = nullptr;
  const double value = std::strtod(digits.c_str(), &end);
  if (end != digits.c_str() + digits.size() || errno == ERANGE) return std::nullopt;
  // strtod also reads "nan" and "inf": ncu never prints them for a value.
  if (digits.find_first_of("nNiI") != std::string::npos) return std::nullopt;
  return value;
}

bool is_not_available(const std::string& field) { return field == "n/a" || field == "N/A"; }

}  // namespace kscope::ncu

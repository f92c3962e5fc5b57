#pragma once
// CSV pieces beyond kscope::write_csv, for files written a few rows at a time and read back (the
// samples a sweep streams to disk).
#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kscope/columns.hpp"
#include "kscope/table.hpp"

namespace kscope::detail {

// One row (of a table write_csv writes: one cell per column, checked by the caller), one field.
void write_csv_row(const std::vector<Cell>& cells, std::ostream& out);
void append_csv_field(std::string& out, const Cell& cell, bool alone_on_line);

struct CsvRecord {
  std::vector<std::string> fields;
  std::size_t end = 0;  // offset just past the record's line break
};

// Reads the records of RFC 4180 text one at a time, the header included, so that a file of any
// size is read in the memory of one record, and a record's memory is bounded whatever the file holds.
class CsvRecordReader {
 public:
  // A record longer than this ends the reading: no file kscope writes has one.
  static constexpr std::size_t kMaxRecordBytes = std::size_t(64) << 20;

  // `in`: read from its current position; a stream that is not open has no records. A record
  // keeps at most `max_fields` + 1 fields (its further fields are dropped): enough to tell that it
  // has more than `max_fields`.
  explicit CsvRecordReader(std::istream& in, std::size_t max_fields = SIZE_MAX) : in_(in), max_fields_(max_fields) {}
  // The next complete record, its end counted from where reading began; false at the end. A last
  // record without its line break (a file cut off while being written) is not returned, nor is one
  // longer than kMaxRecordBytes, which ends the reading (too_long() says so).
  bool next(CsvRecord& record);
  bool too_long() const { return too_long_; }

 private:
  std::istream& in_;
  std::size_t max_fields_;
  std::size_t offset_ = 0;
  bool too_long_ = false;
};

// A field as write_csv wrote a cell of this type: empty is a missing value (NaN for numbers);
// nullopt when the text is not such a cell.
std::optional<Cell> parse_cell(const std::string& text, ColumnType type);

}  // namespace kscope::detail

#pragma once
// Internal helpers shared by the table writers and the progress reporter.
#include <cstddef>
#include <string>
#include <string_view>

#include "kscope/table.hpp"

namespace kscope::detail {

// Text written a piece at a time is handed to the stream in chunks of about this many bytes.
inline constexpr std::size_t kWriteChunk = std::size_t(1) << 18;

// Throws Error unless every row has one cell per column and no column name repeats: a writer
// must never drop or misplace a value silently.
void check_table_shape(const Table& table);
// The same for one row of a table written row by row.
void check_row_shape(std::size_t row, std::size_t cells, std::size_t columns);

// Visitor built from lambdas, one per Cell alternative.
template <class... Handlers>
struct Overloaded : Handlers... {
  using Handlers::operator()...;
};

inline bool is_utf8_continuation(char byte) {
  return (static_cast<unsigned char>(byte) & 0xC0) == 0x80;
}

// Display width of UTF-8 text, one column per code point (kernel names and config values are
// ASCII or narrow characters; a wide East Asian glyph would count as one).
inline std::size_t display_width(std::string_view utf8) {
  std::size_t width = 0;
  for (char byte : utf8) width += is_utf8_continuation(byte) ? 0 : 1;
  return width;
}

// The text itself if it fits in max_width columns; else its first max_width - 1 code points
// followed by "…".
inline std::string truncate_to_width(std::string_view utf8, std::size_t max_width) {
  if (display_width(utf8) <= max_width) return std::string(utf8);
  if (max_width == 0) return {};
  std::size_t end = 0;
  for (std::size_t code_points = 0; end < utf8.size(); ++end) {
    if (!is_utf8_continuation(utf8[end]) && code_points++ == max_width - 1) break;
  }
  return std::string(utf8.substr(0, end)) + "\u2026";
}

}  // namespace kscope::detail

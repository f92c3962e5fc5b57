#pragma once
// Helpers shared by the table writers and the progress reporter.
#include <cstddef>
#include <string>

#include "kscope/detail/text_width.hpp"  // display widths, for the console writers
#include "kscope/table.hpp"

namespace kscope::detail {

// Text written a piece at a time is handed to the stream in chunks of about this many bytes.
inline constexpr std::size_t kWriteChunk = std::size_t(1) << 18;

// Throws Error unless every row has one cell per column and no column name repeats: a writer
// must never drop or misplace a value silently.
void check_table_shape(const Table& table);
// The same for one row of a table written row by row.
void check_row_shape(std::size_t row, std::size_t cells, std::size_t columns);

// Text read from a file, safe to quote in a message: bytes that are not UTF-8 and control
// characters are written as \xNN, so that no message is unreadable (or undecodable in Python).
std::string printable(const std::string& text);

// Whether every byte sequence of `text` is UTF-8 (as every text kscope writes is).
bool is_utf8(const std::string& text);

// A value quoted in a message, cut to its first `keep` characters when longer ("aaaa... (1048576
// characters)"): a message names a value, it does not repeat a megabyte of it.
std::string cut(const std::string& text, std::size_t keep = 100);

// "1 summary row", "2 summary rows": a count and its noun, plural unless one.
inline std::string counted(std::size_t n, const std::string& noun) {
  return std::to_string(n) + " " + noun + (n == 1 ? "" : "s");
}

// Visitor built from lambdas, one per Cell alternative.
template <class... Handlers>
struct Overloaded : Handlers... {
  using Handlers::operator()...;
};

}  // namespace kscope::detail

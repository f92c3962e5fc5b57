#pragma once
// The width of text on a terminal, for kscope's console tables and the kscope program's.
#include <cstddef>
#include <string>
#include <string_view>

namespace kscope::detail {

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

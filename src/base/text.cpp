#include "base/text.hpp"

#include <cstdio>

namespace kscope::detail {
namespace {

// The length of the valid UTF-8 sequence that starts at text[i], or 0.
std::size_t utf8_length(const std::string& text, std::size_t i) {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char first = byte(i);
  std::size_t length = 0;
  unsigned min = 0;
  if (first < 0x80) return 1;
  if (first >= 0xC2 && first <= 0xDF) length = 2, min = 0x80;
  else if (first >= 0xE0 && first <= 0xEF) length = 3, min = 0x800;
  else if (first >= 0xF0 && first <= 0xF4) length = 4, min = 0x10000;
  else return 0;
  if (i + length > text.size()) return 0;
  unsigned code = first & (0x7F >> length);
  for (std::size_t k = 1; k < length; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) return 0;
    code = (code << 6) | (byte(i + k) & 0x3F);
  }
  const bool surrogate = code >= 0xD800 && code <= 0xDFFF;
  return code < min || code > 0x10FFFF || surrogate ? 0 : length;
}

}  // namespace

std::string printable(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t length = utf8_length(text, i);
    const auto c = static_cast<unsigned char>(text[i]);
    if (length == 0 || (length == 1 && (c < 0x20 || c == 0x7F) && c != '\n' && c != '\t')) {
      char escaped[5];
      std::snprintf(escaped, sizeof escaped, "\\x%02X", c);
      out += escaped;
      ++i;
    } else {
      out.append(text, i, length);
      i += length;
    }
  }
  return out;
}

bool is_utf8(const std::string& text) {
  for (std::size_t i = 0, length = 0; i < text.size(); i += length)
    if ((length = utf8_length(text, i)) == 0) return false;
  return true;
}

std::string cut(const std::string& text, std::size_t keep) {
  std::size_t characters = 0, end = 0;
  for (std::size_t i = 0; i < text.size(); ++i)
    if ((static_cast<unsigned char>(text[i]) & 0xC0) != 0x80 && characters++ == keep) end = i;
  if (characters <= keep) return text;
  return text.substr(0, end) + "... (" + std::to_string(characters) + " characters)";
}

}  // namespace kscope::detail

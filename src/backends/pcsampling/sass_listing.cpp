#include "backends/pcsampling/sass_listing.hpp"

#include <sstream>

namespace kscope::pcsampling {
namespace {

std::string_view trimmed(std::string_view s) {
  const auto first = s.find_first_not_of(" \t\r");
  if (first == std::string_view::npos) return {};
  const auto last = s.find_last_not_of(" \t\r");
  return s.substr(first, last - first + 1);
}

bool is_hex(std::string_view s) {
  return !s.empty() && s.find_first_not_of("0123456789abcdefABCDEF") == std::string_view::npos;
}

}  // namespace

SassListing parse_sass_listing(std::string_view listing) {
  SassListing out;
  std::map<std::uint64_t, std::string>* function = nullptr;
  std::istringstream in{std::string(listing)};
  for (std::string raw; std::getline(in, raw);) {
    const std::string_view line = trimmed(raw);
    if (line.starts_with(".text.") && line.ends_with(':')) {
      function = &out[std::string(line.substr(6, line.size() - 7))];
      continue;
    }
    // "/*0a40*/   @!P0 BRA `(.L_x_1) ;" (and, with -hex, a "/* 0x... */" encoding after the ';')
    if (function == nullptr || !line.starts_with("/*")) continue;
    const auto close = line.find("*/");
    if (close == std::string_view::npos || !is_hex(line.substr(2, close - 2))) continue;
    std::string_view text = trimmed(line.substr(close + 2));
    if (const auto end = text.find(';'); end != std::string_view::npos) text = trimmed(text.substr(0, end));
    if (text.empty()) continue;
    (*function)[std::stoull(std::string(line.substr(2, close - 2)), nullptr, 16)] = std::string(text);
  }
  return out;
}

}  // namespace kscope::pcsampling

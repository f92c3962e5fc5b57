#include "base/json_text.hpp"

#include <string>

#include "base/json_error.hpp"
#include "base/text.hpp"

namespace kscope::detail {
namespace {

// Throws unless every bracket lies within kMaxJsonDepth levels.
void check_depth(std::string_view text) {
  std::size_t depth = 0, line = 1, line_start = 0;
  bool in_string = false, escaped = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '\n') {
      ++line;
      line_start = i + 1;
    }
    if (in_string) {
      if (escaped) escaped = false;
      else if (c == '\\') escaped = true;
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxJsonDepth)
        throw JsonTextError("it nests deeper than " + std::to_string(kMaxJsonDepth) + " levels, at line " +
                            std::to_string(line) + ", column " + std::to_string(i - line_start + 1));
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
}

template <typename Json>
Json parse(std::string_view text) {
  check_depth(text);
  try {
    return Json::parse(text);
  } catch (const typename Json::out_of_range& e) {
    // The one out_of_range the parser throws: a number beyond a double's range.
    throw JsonTextError(printable(json_error_text(e)) +
                        ": beyond the range of a double (kscope writes infinities as \"Infinity\")");
  } catch (const typename Json::exception& e) {
    throw JsonTextError(printable(json_error_text(e)));
  }
}

}  // namespace

nlohmann::json parse_json(std::string_view text) { return parse<nlohmann::json>(text); }
nlohmann::ordered_json parse_ordered_json(std::string_view text) { return parse<nlohmann::ordered_json>(text); }

}  // namespace kscope::detail

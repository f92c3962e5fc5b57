#pragma once
// JSON text kscope reads back (a results file, a manifest, a progress line, a lock record), parsed
// whatever it holds: text nested deeper than any file kscope writes is refused before the parser's
// recursion sees it, and every other problem (bad syntax, invalid UTF-8, a number beyond a double's
// range such as 1e999) is a JsonTextError saying what and where, never nlohmann's own exceptions.
#include <cstddef>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string_view>

namespace kscope::detail {

// what(): the problem, printable, for a message that names the file ("nests deeper than 64
// levels, at line 1, column 65").
class JsonTextError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// kscope's own files nest 5 levels at most.
inline constexpr std::size_t kMaxJsonDepth = 64;

nlohmann::json parse_json(std::string_view text);
nlohmann::ordered_json parse_ordered_json(std::string_view text);

}  // namespace kscope::detail

#pragma once
// nlohmann::json's exception text without its "[json.exception.parse_error.101] " tag: the part a
// reader of kscope's messages can act on ("parse error at line 3, column 1: ...").
#include <exception>
#include <string>

namespace kscope::detail {

inline std::string json_error_text(const std::exception& e) {
  std::string text = e.what();
  if (const auto end = text.find("] "); text.rfind("[json.exception.", 0) == 0 && end != std::string::npos)
    text.erase(0, end + 2);
  return text;
}

}  // namespace kscope::detail

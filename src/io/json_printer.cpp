#include "io/json_printer.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <ostream>

#include "base/text.hpp"

namespace kscope::detail {
namespace {

using Json = nlohmann::ordered_json;

void indent(std::string& out, std::size_t depth) {
  out += '\n';
  out.append(depth, ' ');
}

}  // namespace

std::string dumped_json(const Json& j) { return j.dump(1, ' ', false, Json::error_handler_t::replace); }

std::string json_members(const Json& object) {
  const std::string text = dumped_json(object);  // "{" members "\n}"
  return text.substr(1, text.size() - 3);
}

void append_json(std::string& out, const Json& j, std::size_t depth) {
  char digits[64];
  switch (j.type()) {
    case Json::value_t::null: out += "null"; return;
    case Json::value_t::boolean: out += j.get<bool>() ? "true" : "false"; return;
    case Json::value_t::number_integer:
      out.append(digits, std::to_chars(digits, digits + sizeof digits, j.get<std::int64_t>()).ptr);
      return;
    case Json::value_t::number_unsigned:
      out.append(digits, std::to_chars(digits, digits + sizeof digits, j.get<std::uint64_t>()).ptr);
      return;
    case Json::value_t::number_float: {
      // dump's own shortest round-trip digits (Grisu2, not always std::to_chars'), without the
      // serializer that dump builds for every call.
      const double v = j.get<double>();
      if (!std::isfinite(v)) out += "null";
      else out.append(digits, nlohmann::detail::to_chars(digits, digits + sizeof digits, v));
      return;
    }
    case Json::value_t::string: {
      // Printable ASCII without quotes or backslashes is printed as it is; anything else is
      // escaped by dump.
      const auto& text = j.get_ref<const std::string&>();
      if (std::all_of(text.begin(), text.end(), [](char c) { return c >= 0x20 && c < 0x7f && c != '"' && c != '\\'; })) {
        out += '"';
        out += text;
        out += '"';
      } else {
        out += dumped_json(j);
      }
      return;
    }
    case Json::value_t::array:
    case Json::value_t::object: {
      const bool object = j.is_object();
      if (j.empty()) {
        out += object ? "{}" : "[]";
        return;
      }
      out += object ? '{' : '[';
      bool first = true;
      for (auto it = j.begin(); it != j.end(); ++it, first = false) {
        if (!first) out += ',';
        indent(out, depth + 1);
        if (object) {
          append_json(out, Json(it.key()), depth + 1);
          out += ": ";
        }
        append_json(out, *it, depth + 1);
      }
      indent(out, depth);
      out += object ? '}' : ']';
      return;
    }
    default: out += dumped_json(j); return;  // binary: never written by kscope
  }
}

void append_json_member(std::string& out, bool first, const std::string& key, const Json& value, std::size_t depth) {
  if (!first) out += ',';
  indent(out, depth + 1);
  out += key;
  out += ": ";
  append_json(out, value, depth + 1);
}

void write_json_list(std::ostream& out, const std::string& key, std::size_t count,
                     const std::function<void(std::size_t, std::string&)>& element) {
  std::string text = ",\n " + dumped_json(key) + ": ";
  if (count == 0) {
    out << text << "[]";
    return;
  }
  text += "[";
  for (std::size_t i = 0; i < count; ++i) {
    if (i) text += ",";
    indent(text, 2);
    element(i, text);
    if (text.size() >= kWriteChunk) {
      out << text;
      text.clear();
    }
  }
  out << text << "\n ]";
}

}  // namespace kscope::detail

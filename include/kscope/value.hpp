#pragma once
// A configuration value: one of the four types a sweep axis may hold.
#include <cstdint>
#include <string>
#include <string_view>
#include <variant>

namespace kscope {

enum class ValueType { integer, real, text, boolean };

std::string_view to_string(ValueType type);

// One config value: an integer, a real, text or a boolean. Converts from the C++ literals.
class Value {
 public:
  // One constructor per accepted C++ type, so that a string literal never decays to bool and a
  // plain int is an integer, not a double.
  Value(int v) : data_(static_cast<std::int64_t>(v)) {}
  Value(long v) : data_(static_cast<std::int64_t>(v)) {}  // an integer
  Value(long long v) : data_(static_cast<std::int64_t>(v)) {}  // an integer
  Value(unsigned v) : data_(static_cast<std::int64_t>(v)) {}  // an integer
  Value(double v) : data_(v) {}  // a real
  Value(bool v) : data_(v) {}  // a boolean
  Value(const char* v) : data_(std::string(v)) {}  // text
  Value(std::string v) : data_(std::move(v)) {}  // text
  Value(std::string_view v) : data_(std::string(v)) {}  // text

  ValueType type() const;  // which of the four it holds
  std::int64_t as_int() const;       // throws ConfigError unless integer
  double as_double() const;          // integer or real
  const std::string& as_string() const;  // throws ConfigError unless text
  bool as_bool() const;                  // throws ConfigError unless boolean
  std::string to_string() const;     // for messages and tables

  // Of one type and value; a NaN equals a NaN (the same config value).
  bool operator==(const Value& other) const;

 private:
  std::variant<std::int64_t, double, std::string, bool> data_;
};

}  // namespace kscope

#include "kscope/value.hpp"

#include <charconv>
#include <cmath>

#include "kscope/errors.hpp"
#include "kscope/detail/enum_names.hpp"

namespace kscope {

std::string_view to_string(ValueType type) {
  for (const auto& [value, name] : detail::enum_names(type))
    if (value == type) return name;
  return "?";
}

ValueType Value::type() const { return static_cast<ValueType>(data_.index()); }

namespace {
[[noreturn]] void wrong_type(const Value& v, ValueType wanted) {
  throw ConfigError("config value " + v.to_string() + " is of type " + std::string(to_string(v.type())) +
                    ", not " + std::string(to_string(wanted)) + ": read it with get<" +
                    (v.type() == ValueType::integer ? "int64_t"
                     : v.type() == ValueType::real  ? "double"
                     : v.type() == ValueType::text  ? "std::string"
                                                    : "bool") +
                    ">() or change the axis values");
}
}  // namespace

std::int64_t Value::as_int() const {
  if (auto* v = std::get_if<std::int64_t>(&data_)) return *v;
  wrong_type(*this, ValueType::integer);
}

double Value::as_double() const {
  if (auto* v = std::get_if<double>(&data_)) return *v;
  if (auto* v = std::get_if<std::int64_t>(&data_)) return static_cast<double>(*v);
  wrong_type(*this, ValueType::real);
}

const std::string& Value::as_string() const {
  if (auto* v = std::get_if<std::string>(&data_)) return *v;
  wrong_type(*this, ValueType::text);
}

bool Value::as_bool() const {
  if (auto* v = std::get_if<bool>(&data_)) return *v;
  wrong_type(*this, ValueType::boolean);
}

bool Value::operator==(const Value& other) const {
  const double* a = std::get_if<double>(&data_);
  const double* b = std::get_if<double>(&other.data_);
  if (a && b && std::isnan(*a) && std::isnan(*b)) return true;
  return data_ == other.data_;
}

std::string Value::to_string() const {
  switch (type()) {
    case ValueType::integer: return std::to_string(std::get<std::int64_t>(data_));
    case ValueType::real: {
      char buf[32];
      auto res = std::to_chars(buf, buf + sizeof buf, std::get<double>(data_));
      return std::string(buf, res.ptr);
    }
    case ValueType::text: return std::get<std::string>(data_);
    case ValueType::boolean: return std::get<bool>(data_) ? "true" : "false";
  }
  return {};
}

}  // namespace kscope

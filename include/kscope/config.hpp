#pragma once
// One point of a sweep: named values, read by the benchmark body with get<T>(name).
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kscope/value.hpp"

namespace kscope {

// One point of a sweep: a value per axis, read by name (Config::get) in the body.
class Config {
 public:
  // The sweep makes configs; a body receives them.
  Config(std::shared_ptr<const std::vector<std::string>> names, std::vector<Value> values,
         std::size_t index);

  // Typed access. Unknown names list the axes (closest first); a type mismatch names both types.
  template <typename T>
  T get(const std::string& name) const;
  const Value& at(const std::string& name) const;  // the value of an axis, untyped

  const std::vector<std::string>& names() const { return *names_; }  // the axes, in the sweep's order
  const std::vector<Value>& values() const { return values_; }        // one per axis, in that order
  std::size_t index() const { return index_; }   // position in the sweep
  std::string to_string() const;                 // "n=1024, dtype=f32"

 private:
  std::shared_ptr<const std::vector<std::string>> names_;
  std::vector<Value> values_;
  std::size_t index_;
};

template <> inline std::int64_t Config::get<std::int64_t>(const std::string& n) const { return at(n).as_int(); }  // an integer axis
template <> inline int Config::get<int>(const std::string& n) const { return static_cast<int>(at(n).as_int()); }  // an integer axis, as int
template <> inline double Config::get<double>(const std::string& n) const { return at(n).as_double(); }  // an integer or real axis
template <> inline std::string Config::get<std::string>(const std::string& n) const { return at(n).as_string(); }  // a text axis
template <> inline bool Config::get<bool>(const std::string& n) const { return at(n).as_bool(); }  // a boolean axis

}  // namespace kscope

#include "kscope/config.hpp"

#include <algorithm>

#include "core/model/suggest.hpp"
#include "kscope/errors.hpp"

namespace kscope {

Config::Config(std::shared_ptr<const std::vector<std::string>> names, std::vector<Value> values,
               std::size_t index)
    : names_(std::move(names)), values_(std::move(values)), index_(index) {}

const Value& Config::at(const std::string& name) const {
  auto it = std::find(names_->begin(), names_->end(), name);
  if (it == names_->end()) {
    throw ConfigError("config has no axis '" + name + "'; closest axes: " +
                      detail::quoted_list(detail::closest_names(name, *names_)) +
                      " (axes are declared with Sweep::axis or Sweep::zip)");
  }
  const Value& v = values_[static_cast<std::size_t>(it - names_->begin())];
  return v;
}

std::string Config::to_string() const {
  std::string out;
  for (std::size_t i = 0; i < values_.size(); ++i) {
    if (i) out += ", ";
    out += (*names_)[i] + "=" + values_[i].to_string();
  }
  return out.empty() ? "(no axes)" : out;
}

}  // namespace kscope

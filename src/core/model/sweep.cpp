#include "kscope/sweep.hpp"

#include <cstdint>
#include <cstring>
#include <set>
#include <unordered_map>

#include "core/model/caller_language.hpp"
#include "kscope/errors.hpp"

namespace kscope {
namespace {

// The exact value (a double by its bits), so that rows compare by a string key.
std::string key_of(const Value& v) {
  switch (v.type()) {
    case ValueType::integer: return "i" + std::to_string(v.as_int());
    case ValueType::real: {
      const double d = v.as_double();
      std::uint64_t bits = 0;
      std::memcpy(&bits, &d, sizeof bits);
      return "r" + std::to_string(bits);
    }
    case ValueType::text: return "t" + std::to_string(v.as_string().size()) + ":" + v.as_string();
    case ValueType::boolean: return v.as_bool() ? "b1" : "b0";
  }
  return {};
}

std::string row_text(const std::vector<std::string>& names, const std::vector<Value>& row) {
  std::string out;
  for (std::size_t i = 0; i < row.size(); ++i) out += (i ? ", " : "") + names[i] + "=" + row[i].to_string();
  return out;
}

}  // namespace

Sweep& Sweep::axis(std::string name, std::vector<Value> values) {
  Group g;
  g.names.push_back(std::move(name));
  for (auto& v : values) g.rows.push_back({std::move(v)});
  groups_.push_back(std::move(g));
  return *this;
}

Sweep& Sweep::zip(std::vector<std::string> names, std::vector<std::vector<Value>> rows) {
  groups_.push_back(Group{std::move(names), std::move(rows)});
  return *this;
}

std::vector<std::string> Sweep::names() const {
  std::vector<std::string> out;
  for (const auto& g : groups_) out.insert(out.end(), g.names.begin(), g.names.end());
  return out;
}

void Sweep::validate() const {
  std::set<std::string> seen;
  for (const auto& g : groups_) {
    if (g.names.empty()) throw ConfigError("Sweep::zip was given no axis names");
    for (const auto& n : g.names) {
      if (n.empty()) throw ConfigError("a sweep axis has an empty name");
      if (!seen.insert(n).second)
        throw ConfigError("sweep axis '" + n + "' is declared twice; give each axis one name");
    }
    const std::string label = g.names.size() == 1 ? "axis '" + g.names[0] + "'" : "zipped axes";
    if (g.rows.empty()) throw ConfigError("sweep " + label + " has no values");
    for (std::size_t r = 0; r < g.rows.size(); ++r) {
      const auto& row = g.rows[r];
      if (row.size() != g.names.size()) {
        throw ConfigError("config " + std::to_string(r) + " of the " + label + " has " +
                          std::to_string(row.size()) + " values but " +
                          std::to_string(g.names.size()) + " axes are named; give one value per axis");
      }
      for (std::size_t c = 0; c < row.size(); ++c) {
        const ValueType expected = g.rows[0][c].type();
        if (row[c].type() != expected) {
          throw ConfigError("sweep axis '" + g.names[c] + "' mixes types: value " +
                            row[c].to_string() + " is of type " + std::string(to_string(row[c].type())) +
                            " but the first value is of type " + std::string(to_string(expected)) +
                            "; use one type per axis (e.g. write 2.0, not 2, on a double axis)");
        }
      }
    }
    check_unique(g, label);
  }
}

// A config given twice would be measured twice and then be two rows of one name in every table (and
// a comparison could not match them): refused, naming both places.
void Sweep::check_unique(const Group& group, const std::string& label) {
  std::unordered_map<std::string, std::size_t> first;
  for (std::size_t r = 0; r < group.rows.size(); ++r) {
    std::string key;
    for (const auto& v : group.rows[r]) key += key_of(v) + ";";
    const auto [seen, inserted] = first.emplace(std::move(key), r);
    if (!inserted)
      throw ConfigError("config (" + row_text(group.names, group.rows[r]) + ") is given twice, as entries " +
                        std::to_string(seen->second + 1) + " and " + std::to_string(r + 1) + " of the " +
                        detail::spell(label, "configs") + ": each config is measured once; remove the repeat");
  }
}

std::vector<Config> Sweep::configs() const {
  validate();
  auto names = std::make_shared<const std::vector<std::string>>(this->names());
  // Odometer over the groups, last group fastest.
  std::vector<std::size_t> position(groups_.size(), 0);
  std::vector<Config> out;
  while (true) {
    std::vector<Value> values;
    for (std::size_t g = 0; g < groups_.size(); ++g) {
      const auto& row = groups_[g].rows[position[g]];
      values.insert(values.end(), row.begin(), row.end());
    }
    out.emplace_back(names, std::move(values), out.size());
    std::size_t g = groups_.size();
    while (g > 0) {
      --g;
      if (++position[g] < groups_[g].rows.size()) break;
      position[g] = 0;
      if (g == 0) return out;
    }
    if (groups_.empty()) return out;
  }
}

}  // namespace kscope

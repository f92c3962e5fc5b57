#pragma once
// The set of configurations a profile runs over: cartesian axes, explicit lists, or both
// (an explicit list is crossed with the axes as one zipped axis group), and the body it runs.
#include <functional>
#include <string>
#include <vector>

#include "kscope/config.hpp"
#include "kscope/value.hpp"

namespace kscope {

// What a sweep runs: called once per run with the run's config.
using Body = std::function<void(const Config&)>;

// The configs a profile() call measures: cartesian axes and zipped groups of values, crossed.
class Sweep {
 public:
  // A cartesian axis. All values must share one type; names must be unique.
  Sweep& axis(std::string name, std::vector<Value> values);
  // Zipped values: each row gives one value per name, crossed with the other groups.
  Sweep& zip(std::vector<std::string> names, std::vector<std::vector<Value>> rows);

  // Every configuration, first axis slowest. Throws ConfigError (arity, types, empty axes,
  // duplicate names, a value or zipped row given twice) before anything runs.
  std::vector<Config> configs() const;
  std::vector<std::string> names() const;  // the axes, in order
  void validate() const;  // throws ConfigError as configs() would, without making them

 private:
  struct Group {
    std::vector<std::string> names;
    std::vector<std::vector<Value>> rows;
  };
  static void check_unique(const Group& group, const std::string& label);

  std::vector<Group> groups_;
};

}  // namespace kscope

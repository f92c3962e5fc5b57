#pragma once
// What the results file knows about settings, for code that compares saved results.
#include <string>
#include <vector>

#include "kscope/settings.hpp"

namespace kscope::detail {

// "runs: 10 and 20", one entry per saved setting (those that decide the numbers) that differs
// between `a` and `b`; the shard is not compared.
std::vector<std::string> measurement_differences(const Settings& a, const Settings& b);

}  // namespace kscope::detail

#pragma once
// Which of the settings that decide the numbers differ between two runs' settings: what merge
// refuses. Declared here, where the engine asks; defined by the results file
// (io/results_file.cpp), whose one list of saved settings says which those are, so that a setting
// saved there is compared here without a second list.
#include <string>
#include <vector>

#include "kscope/settings.hpp"

namespace kscope::detail {

// "runs: 10 and 20", one entry per saved setting that differs between `a` and `b`; the shard is
// not compared.
std::vector<std::string> measurement_differences(const Settings& a, const Settings& b);

}  // namespace kscope::detail

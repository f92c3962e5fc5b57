#pragma once
// The check of the info collectors' names that needs the sweep, for the front ends that know its
// axes before profile() does (the Python decorator: the function's parameters).
#include <string>
#include <vector>

namespace kscope::detail {

// Throws ConfigError for a collector named as a config axis (a Python function's parameter), whose
// column it would shadow. The collectors' other checks are Settings::validate's.
void check_collector_names_against_axes(const std::vector<std::string>& collector_names,
                                        const std::vector<std::string>& axis_names);

}  // namespace kscope::detail

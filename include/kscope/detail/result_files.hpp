#pragma once
// The files Results::write_all writes under an output prefix, as the output formats' table has
// them, for the front ends' messages and help.
#include <string>
#include <vector>

namespace kscope::detail {

// Each output format's file under a prefix ("summary.csv", ...), in the order write_all writes them.
std::vector<std::string> result_files();

// "<prefix>{summary.csv,samples.csv,results.json}"
std::string result_files_text(const std::string& prefix);

}  // namespace kscope::detail

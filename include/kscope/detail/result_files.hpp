#pragma once
// The files Results::write_all (and Comparison::write_all) writes under an output prefix, as the
// output formats' tables have them, for the front ends' messages and help.
#include <string>
#include <vector>

namespace kscope::detail {

// Each output format's file under a prefix ("summary.csv", ...), in the order write_all writes them.
std::vector<std::string> result_files();

// "<prefix>{summary.csv,samples.csv,results.json}"
std::string result_files_text(const std::string& prefix);

// "<prefix>{comparison.csv,comparison.json}": the files Comparison::write_all writes.
std::string comparison_files_text(const std::string& prefix);

}  // namespace kscope::detail

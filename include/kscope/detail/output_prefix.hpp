#pragma once
// How an output prefix names files, for kscope's front ends that take one (kscope merge's --output).
#include <string>

namespace kscope::detail {

// An output prefix that names an existing directory stands for that directory ("out" -> "out/"):
// its files go inside it, not beside it as "outsummary.csv". Any other prefix is returned as it is.
std::string directory_as_prefix(const std::string& prefix);

}  // namespace kscope::detail

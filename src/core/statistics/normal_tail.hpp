#pragma once
// The standard normal distribution's upper tail, P(Z > z): the limit of Student's t for many
// degrees of freedom (statistics.cpp) and the U test's normal approximation (significance.cpp).
#include <cmath>
#include <numbers>

namespace kscope::detail {

inline double normal_upper_tail(double z) { return 0.5 * std::erfc(z / std::numbers::sqrt2); }

}  // namespace kscope::detail

#pragma once
// The valid values of a series of samples: NaN marks a failed run, and every statistic leaves it out.
#include <algorithm>
#include <cmath>
#include <iterator>
#include <span>
#include <vector>

namespace kscope::detail {

inline std::vector<double> sorted_valid_samples(std::span<const double> samples) {
  std::vector<double> valid;
  valid.reserve(samples.size());
  std::copy_if(samples.begin(), samples.end(), std::back_inserter(valid),
               [](double x) { return !std::isnan(x); });
  std::sort(valid.begin(), valid.end());
  return valid;
}

}  // namespace kscope::detail

#pragma once
// The median, one definition for every part of kscope that takes one (the summary statistic, the
// bootstrap's resamples, an evaluation's and a race's durations, the idle power): the middle value,
// or the midpoint of the two middle values of an even count.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <numeric>
#include <span>
#include <vector>

namespace kscope::detail {

// Of values sorted already (never empty).
inline double median_of_sorted(std::span<const double> sorted) {
  const std::size_t n = sorted.size();
  return n % 2 == 1 ? sorted[n / 2] : std::midpoint(sorted[n / 2 - 1], sorted[n / 2]);
}

// Reorders `values` (partially: cheaper than sorting them, for the bootstrap's many resamples);
// NaN when there are none.
inline double median_in_place(std::span<double> values) {
  if (values.empty()) return NAN;
  const auto middle = values.begin() + static_cast<std::ptrdiff_t>(values.size() / 2);
  std::nth_element(values.begin(), middle, values.end());
  if (values.size() % 2 == 1) return *middle;
  return std::midpoint(*std::max_element(values.begin(), middle), *middle);
}

// Of a copy of the values; NaN when there are none.
inline double median(std::vector<double> values) { return median_in_place(values); }

}  // namespace kscope::detail

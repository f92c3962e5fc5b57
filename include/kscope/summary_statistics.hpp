#pragma once
// What a summary row's statistics are: SampleStatistics, and the statistics table, each statistic a
// name (its summary column) and a function (src/core/model/summary_statistics.cpp); summarize()
// (kscope/statistics.hpp) computes them.
#include <cstddef>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace kscope {

// The statistics of one summary row over its valid samples.
struct SampleStatistics {
  std::size_t count = 0;       // valid (non-NaN) samples
  double mean = 0, stddev = 0, min = 0, max = 0, median = 0;  // NaN where undefined
  double ci95_lower = 0, ci95_upper = 0;  // mean -/+ t(0.975, n-1) * s / sqrt(n); NaN for n < 2
  double rsd_pct = 0;                     // 100 * s / |mean|; NaN for n < 2 or mean == 0
  std::optional<bool> stable;             // rsd_pct < threshold; empty when rsd_pct is NaN
  // Robust spread: quartiles, IQR and the 20th/80th percentiles (linear interpolation between
  // order statistics, as numpy's default), and the samples outside Tukey's fences
  // [q1 - 1.5 IQR, q3 + 1.5 IQR].
  double q1 = 0, q3 = 0, iqr = 0, p20 = 0, p80 = 0;
  std::size_t outliers = 0;  // samples outside Tukey's fences
  // The values of the table's statistics without a field of their own (those a program registers),
  // in summary_statistics()' order; statistic() reads them by name.
  std::vector<double> added;
};

// A statistic of each summary row's samples, by name (as Google Benchmark's statistics are): its
// summary column, in the metric's unit, comes from it (CSV, JSON, the results file, DataFrames).
struct SummaryStatistic {
  std::string name;  // its summary column, e.g. "P99"
  // Its value from the row's valid samples, sorted and never empty; NaN where it is undefined.
  std::function<double(std::span<const double> sorted)> value;
  // The SampleStatistics field it fills (kscope's own); null: its value is in SampleStatistics::added.
  double SampleStatistics::*field = nullptr;
};

// The statistics table (src/core/model/summary_statistics.cpp) as it is now, kscope's own first,
// in their summary columns' order: after StdDev, before Outliers.
std::vector<SummaryStatistic> summary_statistics();
// Adds a statistic to the summary of every sweep that starts after it; ConfigError for an empty
// name or function, a field, or a name a summary column has.
void register_summary_statistic(SummaryStatistic statistic);
// The value of the statistic named `name` (one of summary_statistics()); ConfigError naming them
// for another name.
double statistic(const SampleStatistics& stats, std::string_view name);

}  // namespace kscope

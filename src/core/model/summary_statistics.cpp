// The statistics table: each summary statistic is a name and a function over a row's valid samples
// (kscope/summary_statistics.hpp). Its summary columns, their cells and their reading back come from it
// (core/model/column_cells.cpp), and summarize() fills SampleStatistics from it.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "core/model/column_cells.hpp"
#include "core/model/median.hpp"
#include "core/model/registry.hpp"
#include "kscope/columns.hpp"
#include "kscope/errors.hpp"
#include "kscope/summary_statistics.hpp"

namespace kscope {
namespace {

// Linear interpolation between order statistics (numpy's default, "type 7").
double quantile(std::span<const double> sorted, double q) {
  const double position = q * static_cast<double>(sorted.size() - 1);
  const auto below = static_cast<std::size_t>(position);
  if (below + 1 >= sorted.size()) return sorted.back();
  return sorted[below] + (position - static_cast<double>(below)) * (sorted[below + 1] - sorted[below]);
}

auto quantile_at(double q) {
  return [q](std::span<const double> sorted) { return quantile(sorted, q); };
}

detail::Registry<SummaryStatistic>& registry() {
  using S = SampleStatistics;
  static detail::Registry<SummaryStatistic> statistics("statistic", "register_summary_statistic()", {
      {"MinValue", [](std::span<const double> sorted) { return sorted.front(); }, &S::min},
      {"MaxValue", [](std::span<const double> sorted) { return sorted.back(); }, &S::max},
      {"Median", detail::median_of_sorted, &S::median},
      {"Q1", quantile_at(0.25), &S::q1},
      {"Q3", quantile_at(0.75), &S::q3},
      {"IQR", [](std::span<const double> sorted) { return quantile(sorted, 0.75) - quantile(sorted, 0.25); }, &S::iqr},
      {"P20", quantile_at(0.20), &S::p20},
      {"P80", quantile_at(0.80), &S::p80},
  });
  return statistics;
}

}  // namespace

std::vector<SummaryStatistic> summary_statistics() { return registry().entries(); }

std::size_t detail::summary_statistic_count() { return registry().size(); }

// The summary columns are read outside the registry's lock: they are made from the registry.
void register_summary_statistic(SummaryStatistic statistic) {
  const std::string what = "register_summary_statistic(): the statistic '" + statistic.name + "'";
  if (statistic.name.empty() || !statistic.value)
    throw ConfigError("register_summary_statistic(): a statistic needs a name (its summary column) and a function");
  if (statistic.field)
    throw ConfigError(what + " names a SampleStatistics field; leave `field` null: its value is SampleStatistics::added's");
  const auto& columns = summary_columns();
  if (std::any_of(columns.begin(), columns.end(), [&](const ColumnSpec& c) { return c.name == statistic.name; }))
    throw ConfigError(what + " has the name of a summary column already; choose another name");
  registry().add(std::move(statistic));
}

double statistic(const SampleStatistics& stats, std::string_view name) {
  std::size_t added = 0;
  std::string names;
  for (const SummaryStatistic& s : summary_statistics()) {
    if (s.name == name) return s.field ? stats.*s.field : added < stats.added.size() ? stats.added[added] : NAN;
    if (!s.field) ++added;
    names += (names.empty() ? "" : ", ") + s.name;
  }
  throw ConfigError("no summary statistic is named '" + std::string(name) + "'; the statistics: " + names);
}

}  // namespace kscope

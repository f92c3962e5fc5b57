#pragma once
// Results made by hand for the comparison tests: chosen samples per (annotation, config, metric).
#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "kscope/results.hpp"
#include "kscope/statistics.hpp"

namespace kscope::testing_fixtures {

struct Series {
  std::string annotation;
  std::vector<Value> config;
  std::string metric;
  std::string unit;
  std::vector<double> values;
  double sm_clock_mhz = 1980;
  std::vector<bool> throttled = {};
};

inline SessionInfo h200() {
  SessionInfo s;
  s.backend = Backend::cupti;
  s.gpu = "NVIDIA H200";
  s.driver_version = "580.65.06";
  return s;
}

// Results holding these series, their configs in order of first appearance.
inline Results make(const std::vector<std::string>& axes, const std::vector<Series>& series, SessionInfo session = h200(),
             Settings settings = {}) {
  auto names = std::make_shared<const std::vector<std::string>>(axes);
  std::vector<Config> configs;
  std::vector<SummaryRow> rows;
  std::vector<SampleRow> samples;
  for (const Series& s : series) {
    auto found = std::find_if(configs.begin(), configs.end(), [&](const Config& c) { return c.values() == s.config; });
    if (found == configs.end()) {
      configs.emplace_back(names, s.config, configs.size());
      found = configs.end() - 1;
    }
    const std::size_t config = found->index();
    for (std::size_t r = 0; r < s.values.size(); ++r)
      samples.push_back({s.annotation, config, r, s.metric, s.unit, s.values[r], "k", s.sm_clock_mhz, 3201,
                         r < s.throttled.size() && s.throttled[r]});
    SummaryRow row{};
    row.annotation = s.annotation;
    row.config_index = config;
    row.metric = s.metric;
    row.unit = s.unit;
    row.stats = summarize(s.values, 2.0);
    row.avg_value = row.stats.mean;
    row.observed_sm_clock_mhz = s.sm_clock_mhz;
    rows.push_back(row);
  }
  return Results(session, configs, rows, samples, {}, settings);
}

// n values evenly spread over center +- 1%.
inline std::vector<double> around(double center, std::size_t n = 10) {
  std::vector<double> v;
  for (std::size_t i = 0; i < n; ++i) v.push_back(center * (0.99 + 0.02 * static_cast<double>(i) / (n - 1)));
  return v;
}

}  // namespace kscope::testing_fixtures

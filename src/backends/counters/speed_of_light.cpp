// The Speed-of-Light summary of kscope/metrics.hpp, and the names of its enums: no CUPTI, so
// both builds (with and without CUDA) have them.
#include <algorithm>
#include <cmath>
#include <map>

#include "core/model/caller_language.hpp"
#include "core/model/suggest.hpp"
#include "kscope/errors.hpp"
#include "kscope/metrics.hpp"
#include "kscope/detail/enum_names.hpp"

namespace kscope {
namespace {

const char* const kDuration = kGpuTimeDuration;
const char* const kCompute = "sm__throughput.avg.pct_of_peak_sustained_elapsed";
const char* const kMemory = "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed";
const char* const kDram = "dram__throughput.avg.pct_of_peak_sustained_elapsed";

Cell number(double v) { return std::isnan(v) ? Cell{} : Cell{v}; }

}  // namespace

std::vector<std::string> sol_metrics() { return {kDuration, kCompute, kMemory, kDram}; }

std::string to_string(MetricType t) { return detail::enum_name(t); }

std::string to_string(Bottleneck b) { return detail::enum_name(b); }

std::string bottleneck_rule() {
  return "compute = sm__throughput.avg.pct_of_peak_sustained_elapsed, memory = "
         "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed (% of peak). If the higher of the two is "
         "at least 60%, it names the bottleneck (compute-bound or memory-bound; a tie counts as compute-bound). If "
         "both are below 60%, neither unit is busy: latency-bound (too little parallelism, stalls on dependencies, "
         "or launch-sized work). As in Nsight Compute's Speed-of-Light section.";
}

Bottleneck classify_bottleneck(double compute_pct, double memory_pct) {
  if (std::max(compute_pct, memory_pct) < kBottleneckThresholdPct) return Bottleneck::latency_bound;
  return compute_pct >= memory_pct ? Bottleneck::compute_bound : Bottleneck::memory_bound;
}

Table speed_of_light(const Results& results) {
  const auto has = [&](const char* metric) {
    return std::any_of(results.rows().begin(), results.rows().end(),
                       [&](const SummaryRow& r) { return r.metric == metric; });
  };
  if (!has(kCompute) || !has(kMemory)) {
    std::vector<std::string> present;
    for (const auto& r : results.rows())
      if (std::find(present.begin(), present.end(), r.metric) == present.end()) present.push_back(r.metric);
    throw ConfigError(std::string("speed_of_light() needs the metrics ") + kCompute + " and " + kMemory +
                      "; these results (backend '" + to_string(results.session().backend) + "') hold " +
                      (present.empty() ? std::string("none") : detail::quoted_list(present)) + ". Profile with " +
                      detail::spell("Backend::counters and Settings::metrics = kscope::sol_metrics() (the default)",
                                    "backend='counters' and metrics=kscope.sol_metrics() (the default)"));
  }
  const bool duration = has(kDuration), dram = has(kDram);
  const std::size_t axes = results.axis_names().size();

  struct Group {
    std::size_t first_row;  // for the annotation, axis cells and kernel
    std::map<std::string, double> mean;
  };
  std::vector<Group> groups;
  std::map<std::pair<std::string, std::size_t>, std::size_t> index;
  for (std::size_t i = 0; i < results.rows().size(); ++i) {
    const SummaryRow& r = results.rows()[i];
    auto [it, added] = index.try_emplace({r.annotation, r.config_index}, groups.size());
    if (added) groups.push_back({i, {}});
    groups[it->second].mean[r.metric] = r.stats.mean;  // the mean, even when AvgValue is normalized
  }

  const Table summary = results.summary_table();  // one row per SummaryRow, in order: its axis cells
  Table t;
  t.columns.emplace_back("Annotation");
  for (const auto& a : results.axis_names()) t.columns.push_back(a);
  t.columns.emplace_back("Kernel");
  if (duration) t.columns.emplace_back("DurationNs");
  t.columns.emplace_back("ComputeThroughputPct");
  t.columns.emplace_back("MemoryThroughputPct");
  if (dram) t.columns.emplace_back("DramThroughputPct");
  t.columns.emplace_back("Bottleneck");
  for (const auto& g : groups) {
    const auto value = [&](const char* metric) {
      auto it = g.mean.find(metric);
      return it == g.mean.end() ? NAN : it->second;
    };
    const auto& source = summary.rows[g.first_row];
    std::vector<Cell> row(source.begin(), source.begin() + 1 + static_cast<std::ptrdiff_t>(axes));
    row.emplace_back(results.rows()[g.first_row].kernel);
    if (duration) row.push_back(number(value(kDuration)));
    const double compute = value(kCompute), memory = value(kMemory);
    row.push_back(number(compute));
    row.push_back(number(memory));
    if (dram) row.push_back(number(value(kDram)));
    row.push_back(std::isnan(compute) || std::isnan(memory) ? Cell{}
                                                            : Cell{to_string(classify_bottleneck(compute, memory))});
    t.rows.push_back(std::move(row));
  }
  return t;
}

}  // namespace kscope

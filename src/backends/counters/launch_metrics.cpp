#include "backends/counters/launch_metrics.hpp"
#include "kscope/metrics.hpp"

namespace kscope::counters {
namespace {

double product(const std::array<unsigned, 3>& dims) {
  return static_cast<double>(dims[0]) * static_cast<double>(dims[1]) * static_cast<double>(dims[2]);
}

}  // namespace

const std::vector<LaunchMetric>& launch_metrics() {
  static const std::vector<LaunchMetric> metrics{
      {"launch__block_size", "", "threads per block (blockDim.x * y * z)",
       [](const LaunchShape& l, int) { return product(l.block); }},
      {"launch__grid_size", "", "blocks in the grid (gridDim.x * y * z)",
       [](const LaunchShape& l, int) { return product(l.grid); }},
      {"launch__shared_mem_per_block_dynamic", "byte/block", "dynamic shared memory per block, as launched",
       [](const LaunchShape& l, int) { return static_cast<double>(l.dynamic_shared_bytes); }},
      // The device's SM count: a green context's or MPS client's share of the SMs is not considered.
      {"launch__sm_count", "SM", "streaming multiprocessors of the device",
       [](const LaunchShape&, int sm_count) { return static_cast<double>(sm_count); }},
      {"launch__thread_count", "thread", "threads in the grid (grid size * block size)",
       [](const LaunchShape& l, int) { return product(l.grid) * product(l.block); }},
  };
  return metrics;
}

const LaunchMetric* find_launch_metric(const std::string& name) {
  for (const auto& m : launch_metrics())
    if (name == m.name) return &m;
  return nullptr;
}

std::string launch_metric_names() {
  std::string out;
  for (const auto& m : launch_metrics()) out += (out.empty() ? "" : ", ") + std::string(m.name);
  return out;
}

MetricLayout::MetricLayout(const std::vector<std::string>& names, int sm_count) : sm_count_(sm_count) {
  for (const auto& name : names) {
    if (const LaunchMetric* launch = find_launch_metric(name)) {
      slots_.push_back({launch, 0});
      has_launch_ = true;
    } else {
      slots_.push_back({nullptr, counter_names_.size()});
      counter_names_.push_back(name);
    }
  }
  if (counter_names_.empty()) counter_names_.push_back(kGpuTimeDuration);
}

std::vector<double> MetricLayout::values(const std::vector<double>& counter_values, const LaunchShape& launch) const {
  if (slots_.empty()) return counter_values;
  std::vector<double> out;
  out.reserve(slots_.size());
  for (const Slot& s : slots_) out.push_back(s.launch ? s.launch->value(launch, sm_count_) : counter_values[s.counter]);
  return out;
}

}  // namespace kscope::counters

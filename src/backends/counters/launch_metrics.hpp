#pragma once
// Nsight Compute's launch__* metrics that the counters backend computes itself, as ncu does, from
// each kernel's launch parameters and the device: they are not hardware counters, so the range
// profiler cannot collect them (CUPTI's metric database does not have them). Pure logic, tested
// without a GPU.
#include <array>
#include <cstddef>
#include <string>
#include <vector>

namespace kscope::counters {

// What the driver's launch callback saw of one kernel launch.
struct LaunchShape {
  std::array<unsigned, 3> grid{};   // blocks per dimension
  std::array<unsigned, 3> block{};  // threads per dimension
  unsigned dynamic_shared_bytes = 0;
};

struct LaunchMetric {
  const char* name;
  const char* unit;  // Nsight Compute's
  const char* description;
  double (*value)(const LaunchShape& launch, int sm_count);
};

// Every launch__ metric kscope computes, and the one named `name` (nullptr when it is not one).
const std::vector<LaunchMetric>& launch_metrics();
const LaunchMetric* find_launch_metric(const std::string& name);
// "launch__block_size, launch__grid_size, ..." for messages.
std::string launch_metric_names();

// The requested metrics, split between the range profiler (counters) and the launches, and put
// back together per kernel in the requested order.
class MetricLayout {
 public:
  MetricLayout() = default;  // counters only: values pass through unchanged
  // `sm_count`: the device's, for launch__sm_count.
  MetricLayout(const std::vector<std::string>& names, int sm_count);

  // What the range profiler collects. Never empty: with only launch metrics asked for it still
  // has to find the kernels, so it collects gpu__time_duration.sum (one pass), which is not reported.
  const std::vector<std::string>& counter_names() const { return counter_names_; }
  bool has_launch_metrics() const { return has_launch_; }
  // One value per requested name: the counters' values in counter_names() order, and the launch's.
  std::vector<double> values(const std::vector<double>& counter_values, const LaunchShape& launch) const;

 private:
  struct Slot {
    const LaunchMetric* launch;  // nullptr: a counter
    std::size_t counter;         // its index in counter_names_
  };
  std::vector<Slot> slots_;
  std::vector<std::string> counter_names_;
  bool has_launch_ = false;
  int sm_count_ = 0;
};

}  // namespace kscope::counters

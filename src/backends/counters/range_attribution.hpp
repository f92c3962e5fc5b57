#pragma once
// Joins what the range profiler measured to the regions of a run, from the launches the driver
// callbacks saw. Pure logic, tested without a GPU.
//
// ReplayMode::kernel (AutoRange): CUPTI numbers the ranges in the order the kernels were launched
// between Start and Stop ("1", "2", ... on the H200), so the i-th range is the i-th launch
// (kernels outside every region are measured too and dropped here, the L2 flush's discard kernel
// among them; so are the flushes' memsets between regions: on the H200 each got a range of its own).
// ReplayMode::range (UserRange): kscope pushes one range per region, named by the region index,
// so range "r" is region r, and its values cover all of the region's kernels and the gaps between
// them.
#include <cstddef>
#include <string>
#include <vector>

#include "backends/counters/launch_metrics.hpp"
#include "kscope/measurement_backend.hpp"

namespace kscope::counters {

struct Launch {
  std::ptrdiff_t region;  // -1 outside every region
  std::string kernel;     // demangled; for a graph launch, "CUDA graph"
  bool graph = false;
  // The memset of the runner's L2 flush before a region other than the pass's first: whether
  // CUPTI gives it an auto range is undocumented, so the range count decides. (The flush's discard
  // kernel that follows it is an ordinary launch outside every region.)
  bool flush = false;
  LaunchShape shape{};  // for the launch__ metrics
};

struct RangeResult {
  std::string name;            // CUPTI's range name
  std::vector<double> values;  // one per metric
};

// `layout` puts each kernel's launch__ metrics beside its counter values (none by default).
std::vector<std::vector<KernelMeasurement>> attribute_kernel_ranges(const std::vector<Launch>& launches,
                                                                    const std::vector<RangeResult>& ranges,
                                                                    std::size_t region_count,
                                                                    const MetricLayout& layout = MetricLayout());

std::vector<std::vector<KernelMeasurement>> attribute_user_ranges(const std::vector<Launch>& launches,
                                                                  const std::vector<RangeResult>& ranges,
                                                                  std::size_t region_count);

// Throws AnnotationError unless replay pass `pass` (1-based) launched the same kernels in the
// same regions as the first pass: every pass must repeat the same work.
void check_same_launches(const std::vector<Launch>& first, const std::vector<Launch>& later, std::size_t pass);

}  // namespace kscope::counters

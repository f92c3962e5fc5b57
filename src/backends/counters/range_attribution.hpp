#pragma once
// Joins what the range profiler measured over one replay pass of a batch (several runs between one
// start and one stop) to the runs and regions of the batch, from the launches the driver callbacks
// saw. Pure logic, tested without a GPU.
//
// ReplayMode::kernel (AutoRange): CUPTI numbers the ranges in the order the kernels were launched
// between Start and Stop ("1", "2", ... on the H200), so the i-th range is the i-th launch of the
// pass, whichever run launched it (kernels outside every region are measured too and dropped here).
// An L2 flush is one record however it is enqueued; how many ranges each flush made (none for a
// graph launch; a memset and a discard kernel launched directly made two on the H200) follows from
// the count of ranges, and those ranges are skipped.
// ReplayMode::range (UserRange): kscope pushes one range per region, named by user_range_name(run,
// region), so every range names its run and region, and its values cover all of the region's
// kernels and the gaps between them.
#include <cstddef>
#include <string>
#include <vector>

#include "backends/counters/launch_metrics.hpp"
#include "kscope/measurement_backend.hpp"

namespace kscope::counters {

struct Launch {
  std::size_t run = 0;    // position of its run in the batch
  std::ptrdiff_t region;  // -1 outside every region
  std::string kernel;     // demangled; for a graph launch, "CUDA graph"
  bool graph = false;
  // The runner's L2 flush before a region (the launches it makes are not recorded): how many auto
  // ranges CUPTI gives it is undocumented, so the range count decides.
  bool flush = false;
  LaunchShape shape{};  // for the launch__ metrics
};

struct RangeResult {
  std::string name;            // CUPTI's range name
  std::vector<double> values;  // one per metric
};

// The user range of region `region` of the batch's run `run`.
std::string user_range_name(std::size_t run, std::size_t region);

// Throws BackendError naming the CUDA graph where a region launched one: kernel replay cannot
// measure a graph's kernels one by one, and CUPTI fails the pass with an unknown error if asked.
void refuse_graph_launches(const std::vector<Launch>& launches);

// One measurement per run of the batch: `region_counts[k]` is how many regions run k opened, and
// every launch's run is below region_counts.size(). `layout` puts each kernel's launch__ metrics
// beside its counter values (none by default).
std::vector<RunMeasurement> attribute_kernel_ranges(const std::vector<Launch>& launches,
                                                    const std::vector<RangeResult>& ranges,
                                                    const std::vector<std::size_t>& region_counts,
                                                    const MetricLayout& layout = MetricLayout());

std::vector<RunMeasurement> attribute_user_ranges(const std::vector<Launch>& launches,
                                                  const std::vector<RangeResult>& ranges,
                                                  const std::vector<std::size_t>& region_counts);

// The launches of the batch's run `run`, in order.
std::vector<Launch> launches_of(const std::vector<Launch>& launches, std::size_t run);

// Throws KernelCountError unless a run's launches in replay pass `pass` (1-based) are those of its
// first pass, kernel by kernel and region by region: every pass must repeat the same work.
void check_same_launches(const std::vector<Launch>& first, const std::vector<Launch>& later, std::size_t pass);

}  // namespace kscope::counters

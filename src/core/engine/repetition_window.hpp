#pragma once
// The runs of one energy window folded into one sample. The energy counter measures the window,
// not its runs, so a window is the sample of every metric: each region's measured values (its
// durations) become their mean over the window's runs, and the energy values join them.
#include <cstddef>
#include <string>
#include <vector>

#include "core/model/attribution.hpp"
#include "kscope/measurement_backend.hpp"
#include "kscope/settings.hpp"

namespace kscope::detail {

class RepetitionWindow {
 public:
  // `kernel_metrics`: the values each kernel measurement holds (the backend's metrics).
  RepetitionWindow(std::size_t kernel_metrics, const Settings& settings);

  // One run of the window, once collected: attributed as any run (KernelCountError when a region
  // breaks a rule). Every run must open exactly one annotation, the same one, since the counter
  // cannot tell regions apart (AnnotationUseError).
  void add(const std::vector<RegionRecord>& regions, const RunMeasurement& measured);

  std::size_t runs() const { return runs_; }
  // The region the runs opened (failed when it failed in any of them).
  const std::vector<RegionRecord>& regions() const { return regions_; }
  // Per region, the mean of each measured value over the runs, then `energy`'s values; NaN
  // everywhere when the region failed in a run.
  std::vector<RegionMeasurement> sample(const std::vector<double>& energy) const;

 private:
  std::size_t kernel_metrics_;
  const Settings& settings_;
  std::size_t runs_ = 0;
  std::vector<RegionRecord> regions_;
  std::vector<std::string> kernels_;  // the names the runs' kernels had (one, unless they changed)
  std::vector<double> sums_;  // per measured value
};

}  // namespace kscope::detail

#pragma once
// Turns what a backend saw in one run into one value per (region, metric), applying the rules:
// ignored kernels are dropped, a region must have launched a kernel, and several kernels need a
// combine rule, unless ReplayMode::range measures the region as one range (Kernel "range"; on a
// backend that times each kernel, the span from the first kernel's start to the last one's end).
// A broken rule is a KernelCountError.
#include <cmath>
#include <exception>
#include <stdexcept>
#include <string>
#include <vector>

#include "kscope/measurement_backend.hpp"
#include "kscope/settings.hpp"

namespace kscope::detail {

// Thrown where a callable of the caller's (Settings::combine_kernel_metrics, derive_metric) threw:
// `callback` names it for the message, `cause` is its exception, kept as the sweep's cause.
class CallbackFailure : public std::runtime_error {
 public:
  CallbackFailure(std::string callback, std::exception_ptr cause);
  const std::string& callback() const { return callback_; }
  std::exception_ptr cause() const { return cause_; }

 private:
  std::string callback_;
  std::exception_ptr cause_;
};

struct RegionMeasurement {
  std::string annotation;
  std::string kernel;          // demangled names, "|"-joined when combined
  std::vector<double> values;  // one per backend metric; NaN when the region failed
  bool failed = false;
  std::string failure_reason;
  // How long two or more of its kept kernels (copies, fills) ran at once: the sum of their
  // durations less the time any of them ran; NaN when the backend did not time each of them.
  double overlap_ns = NAN;
  // How long the GPU waited for the host before the region's first work, within the value
  // (KernelMeasurement::host_gap_ns), and that work; NaN where the backend does not time regions.
  double host_gap_ns = NAN;
  std::string first_work;
};

// What the settings do not say about attribution: evaluate() measures a region that caused no GPU
// work as 0 ns in range replay (its no_work finding says so) instead of failing the run.
struct AttributionRules {
  bool empty_range_measures_zero = false;
};

// True if `pattern` (an ignore_kernel_list entry) names this demangled kernel: the full name,
// the name without its parameter list and return type ("saxpy<float>"), or without its template
// arguments too ("saxpy").
bool kernel_matches(const std::string& kernel, const std::string& pattern);

std::vector<RegionMeasurement> attribute_run(const std::vector<RegionRecord>& regions, const RunMeasurement& measured,
                                             std::size_t metric_count, const Settings& settings,
                                             AttributionRules rules = {});

}  // namespace kscope::detail

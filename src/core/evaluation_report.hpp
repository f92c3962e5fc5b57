#pragma once
// From what each run of an evaluation showed (core/evaluator.hpp) and the durations measured
// (Results), the verdict of each config and the findings behind it.
#include <cstddef>
#include <vector>

#include "core/evaluator.hpp"
#include "kscope/evaluate.hpp"
#include "kscope/results.hpp"

namespace kscope::detail {

struct EvaluationReport {
  std::vector<EvaluationRow> rows;
  std::vector<FindingRecord> findings;
};

// The configs the measurements hold, in their order.
EvaluationReport report_evaluation(const std::vector<std::vector<RunRecord>>& records, const Results& measurements,
                                   const EvaluateOptions& options);

// The median of the ratios and its distribution-free interval: the order statistics k and n-k+1
// (1-based) of the sorted ratios, k the largest with P(Binomial(n, 1/2) < k) <= (1 - confidence)/2,
// so that the interval covers the median with at least that confidence; NaN bounds when even the
// smallest and largest ratio do not reach it (fewer than 6 ratios at 95%).
struct MedianInterval {
  double median = NAN;
  double lower = NAN;
  double upper = NAN;
};
MedianInterval median_interval(std::vector<double> values, double confidence);

}  // namespace kscope::detail

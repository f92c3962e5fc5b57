#pragma once
// From what each run of an evaluation showed (core/decisions/evaluator.hpp) and the durations measured
// (Results), the verdict of each config and the findings behind it.
#include <cstddef>
#include <vector>

#include "core/decisions/evaluator.hpp"
#include "core/files/output_formats.hpp"
#include "core/statistics/significance.hpp"  // median_interval
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

}  // namespace kscope::detail

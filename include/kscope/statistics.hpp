#pragma once
// Summary statistics of one group of samples, computed. NaN samples (failed runs) are excluded.
#include <span>

#include "kscope/summary_statistics.hpp"

namespace kscope {

// stddev uses n-1 (sample standard deviation).
SampleStatistics summarize(std::span<const double> samples, double stable_rsd_pct);

// Quantile of Student's t distribution with `dof` degrees of freedom (dof > 0), 0 < p < 1.
double student_t_quantile(double p, double dof);

// exp(mean(log x)) over the non-NaN values; NaN if any is negative or none is valid, 0 if one is 0.
double geometric_mean(std::span<const double> values);

}  // namespace kscope

#include "kscope/statistics.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>
#include <numeric>
#include <string>
#include <vector>

#include "core/statistics/normal_tail.hpp"
#include "core/statistics/valid_samples.hpp"
#include "kscope/errors.hpp"

namespace kscope {
namespace {

constexpr double nan = std::numeric_limits<double>::quiet_NaN();

// Student's t quantile, kept here rather than taken from Boost.Math: Boost's students_t pulls in
// ~2,000 headers (20 MB) that every build machine would need, and this one is exact to 1.4e-10
// relative from p = 1e-300 to 1 - 1e-12 and dof = 0.1 to 1e12 (tests/cpu/test_statistics.cpp).

// Continued fraction of the regularized incomplete beta function I_x(a, b), evaluated with the
// modified Lentz method. It converges quickly for x < (a + 1) / (a + b + 2).
double incomplete_beta_fraction(double a, double b, double x) {
  constexpr double tiny = 1e-300;  // keeps Lentz's denominators away from zero
  constexpr int max_terms = 100000;
  // The fraction is 0 + 1/(1 + d1/(1 + d2/(1 + ...))): Lentz's start for a zero leading term,
  // then partial numerators 1, d1, d2, ... over partial denominators that are all 1.
  double fraction = tiny;
  double c = tiny;
  double d = 0.0;
  // Folds one partial numerator into the fraction; returns the factor it changed it by.
  auto fold = [&](double numerator) {
    d = 1.0 + numerator * d;
    d = 1.0 / (std::abs(d) < tiny ? tiny : d);
    c = 1.0 + numerator / c;
    if (std::abs(c) < tiny) c = tiny;
    fraction *= c * d;
    return c * d;
  };
  fold(1.0);
  fold(-(a + b) * x / (a + 1.0));
  for (int m = 1; m <= max_terms; ++m) {
    fold(m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)));
    const double change = fold(-(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1)));
    if (std::abs(change - 1.0) < 1e-16) return fraction;
  }
  return fraction;  // not reached for the arguments the t distribution produces
}

// I_x(a, b) from log x and log y, y = 1 - x: whichever of x and y is tiny keeps its full relative
// precision (large dof puts x within 1e-5 of 1; huge t with dof = 1 puts it below the smallest double).
double regularized_incomplete_beta(double a, double b, double log_x, double log_y) {
  const double x = std::exp(log_x);
  const double y = std::exp(log_y);
  const double log_front =
      a * log_x + b * log_y + std::lgamma(a + b) - std::lgamma(a) - std::lgamma(b);
  if (x < (a + 1.0) / (a + b + 2.0)) {
    return std::exp(log_front) * incomplete_beta_fraction(a, b, x) / a;
  }
  return 1.0 - std::exp(log_front) * incomplete_beta_fraction(b, a, y) / b;
}

// log(dof / (dof + t^2)) and log(t^2 / (dof + t^2)) for t >= 0, without overflowing t^2.
struct TBetaLogs {
  double log_x, log_y;
};
TBetaLogs t_beta_logs(double t, double dof) {
  const double log_u = std::log(t) - 0.5 * std::log(dof);  // u = t / sqrt(dof)
  if (log_u <= 0.0) {
    const double log_x = -std::log1p(std::exp(2 * log_u));
    return {log_x, 2 * log_u + log_x};
  }
  const double log_y = -std::log1p(std::exp(-2 * log_u));
  return {-2 * log_u + log_y, log_y};
}

// P(T > t) for t >= 0: 0.5 * I_{dof/(dof+t^2)}(dof/2, 1/2).
double t_upper_tail(double t, double dof) {
  const auto [log_x, log_y] = t_beta_logs(t, dof);
  return 0.5 * regularized_incomplete_beta(dof / 2, 0.5, log_x, log_y);
}

double t_density(double t, double dof) {
  // (1 + t^2/dof)^(-(dof+1)/2) is x^((dof+1)/2).
  const double log_density = std::lgamma((dof + 1) / 2) - std::lgamma(dof / 2) -
                             0.5 * std::log(dof * std::numbers::pi) +
                             (dof + 1) / 2 * t_beta_logs(t, dof).log_x;
  return std::exp(log_density);
}

double normal_density(double z) {
  return std::exp(-0.5 * z * z) / std::sqrt(2 * std::numbers::pi);
}

// Solves upper_tail(t) == target (0 < target < 0.5) for t > 0, where upper_tail falls from 0.5 at
// t = 0 and density is minus its derivative. Newton steps converge fast near the root; a step that
// would leave the bracket known to hold the root is replaced by bisection, so heavy tails
// (dof = 1) and poor starting points cannot make it diverge.
template <class UpperTail, class Density>
double solve_upper_tail(double target, UpperTail upper_tail, Density density) {
  double lo = 0.0;
  double hi = 1.0;
  while (upper_tail(hi) > target) {
    lo = hi;
    hi *= 2;
    if (std::isinf(hi)) return hi;  // the quantile is beyond the largest double
  }
  double t = 0.5 * (lo + hi);
  for (int iteration = 0; iteration < 400; ++iteration) {
    const double excess = upper_tail(t) - target;
    if (excess == 0.0) return t;
    (excess > 0.0 ? lo : hi) = t;
    const double newton = t + excess / density(t);
    const double next = newton > lo && newton < hi ? newton : 0.5 * (lo + hi);
    if (std::abs(next - t) <= 1e-15 * next) return next;
    t = next;
  }
  return t;
}

// Above this many degrees of freedom lgamma's cancellation in the exact tail starts to cost
// digits (1e-8 relative at 1e7), while the Cornish-Fisher expansion below is exact to ~1e-15.
constexpr double large_dof = 1e5;

// Cornish-Fisher expansion of the t quantile in powers of 1/dof around the normal quantile z
// (Abramowitz & Stegun 26.7.5); the first omitted term is below 1e-20 for |z| < 10 and
// dof > large_dof.
double t_quantile_from_normal(double z, double dof) {
  const double z2 = z * z;
  const double g1 = (z2 + 1) * z / 4;
  const double g2 = ((5 * z2 + 16) * z2 + 3) * z / 96;
  const double g3 = (((3 * z2 + 19) * z2 + 17) * z2 - 15) * z / 384;
  const double g4 = ((((79 * z2 + 776) * z2 + 1482) * z2 - 1920) * z2 - 945) * z / 92160;
  return z + (g1 + (g2 + (g3 + g4 / dof) / dof) / dof) / dof;
}

}  // namespace

double student_t_quantile(double p, double dof) {
  if (!(p > 0.0 && p < 1.0)) {
    throw ConfigError("student_t_quantile: p must lie strictly between 0 and 1, got " +
                      std::to_string(p));
  }
  if (!(dof > 0.0)) {
    throw ConfigError("student_t_quantile: degrees of freedom must be positive, got " +
                      std::to_string(dof));
  }
  if (p == 0.5) return 0.0;
  // The distribution is symmetric: solve for the upper tail, which 1 - p gives exactly for p > 0.5.
  const double tail = p < 0.5 ? p : 1.0 - p;
  const double sign = p < 0.5 ? -1.0 : 1.0;
  if (dof > large_dof) {
    const double z = solve_upper_tail(tail, detail::normal_upper_tail, normal_density);
    return sign * t_quantile_from_normal(z, dof);
  }
  const double t = solve_upper_tail(
      tail, [dof](double x) { return t_upper_tail(x, dof); },
      [dof](double x) { return t_density(x, dof); });
  return sign * t;
}

SampleStatistics summarize(std::span<const double> samples, double stable_rsd_pct) {
  const std::vector<double> valid = detail::sorted_valid_samples(samples);

  SampleStatistics stats;
  const std::size_t n = valid.size();
  stats.count = n;
  stats.mean = stats.stddev = stats.ci95_lower = stats.ci95_upper = stats.rsd_pct = nan;
  for (const SummaryStatistic& statistic : summary_statistics()) {
    const double value = n == 0 ? nan : statistic.value(valid);
    if (statistic.field) stats.*statistic.field = value;
    else stats.added.push_back(value);
  }
  if (n == 0) return stats;

  stats.outliers = static_cast<std::size_t>(std::count_if(valid.begin(), valid.end(), [&](double x) {
    return x < stats.q1 - 1.5 * stats.iqr || x > stats.q3 + 1.5 * stats.iqr;
  }));
  // Equal samples have their value as mean and no spread, exactly: a rounded sum / n would leave
  // a StdDev of 1e-11 where there is none.
  stats.mean = stats.min == stats.max ? stats.min : std::accumulate(valid.begin(), valid.end(), 0.0) / static_cast<double>(n);
  if (n < 2) return stats;

  // Two passes (mean first, then squared deviations) avoid the cancellation of sum-of-squares.
  double squared_deviations = 0.0;
  for (double x : valid) squared_deviations += (x - stats.mean) * (x - stats.mean);
  stats.stddev = std::sqrt(squared_deviations / static_cast<double>(n - 1));

  const double half_width = student_t_quantile(0.975, static_cast<double>(n - 1)) * stats.stddev /
                            std::sqrt(static_cast<double>(n));
  stats.ci95_lower = stats.mean - half_width;
  stats.ci95_upper = stats.mean + half_width;

  if (stats.mean != 0.0) stats.rsd_pct = 100.0 * stats.stddev / std::abs(stats.mean);
  if (!std::isnan(stats.rsd_pct)) stats.stable = stats.rsd_pct < stable_rsd_pct;
  return stats;
}

double geometric_mean(std::span<const double> values) {
  double log_sum = 0.0;
  std::size_t count = 0;
  bool has_zero = false;
  for (double x : values) {
    if (std::isnan(x)) continue;
    if (x < 0.0) return nan;
    if (x == 0.0) {
      has_zero = true;
    } else {
      log_sum += std::log(x);
    }
    ++count;
  }
  if (count == 0) return nan;
  if (has_zero) return 0.0;
  return std::exp(log_sum / static_cast<double>(count));
}

}  // namespace kscope

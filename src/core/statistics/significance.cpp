#include "core/statistics/significance.hpp"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <limits>
#include <map>
#include <numbers>
#include <numeric>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "core/model/caller_language.hpp"
#include "core/model/median.hpp"
#include "core/statistics/normal_tail.hpp"
#include "core/model/suggest.hpp"
#include "core/statistics/valid_samples.hpp"
#include "kscope/detail/enum_names.hpp"
#include "kscope/errors.hpp"
#include "kscope/statistics.hpp"

namespace kscope::detail {
namespace {

constexpr double nan = std::numeric_limits<double>::quiet_NaN();

bool has_negative(std::span<const double> samples) {
  return std::any_of(samples.begin(), samples.end(), [](double x) { return x < 0; });
}

// How many of the (m + n choose m) equally likely orderings of m x-values and n y-values give
// U_x = u, for u = 0..max_u. Counting recurrence (Mann & Whitney 1947): the largest value is
// either an x, which beats all n y-values, or a y, which adds nothing:
//   f(i, j, u) = f(i - 1, j, u - j) + f(i, j - 1, u),  f(i, 0, u) = f(0, j, u) = [u == 0].
// The distribution of U is the same with the samples swapped, so the rows kept are those of the
// smaller sample. Only additions of non-negative counts: no cancellation.
std::vector<double> u_counts(std::size_t m, std::size_t n, std::size_t max_u) {
  const std::size_t outer = std::max(m, n);
  const std::size_t inner = std::min(m, n);
  std::vector<std::vector<double>> previous(inner + 1, std::vector<double>(max_u + 1, 0.0));
  for (auto& row : previous) row[0] = 1.0;
  auto current = previous;
  for (std::size_t i = 1; i <= outer; ++i) {
    for (std::size_t j = 1; j <= inner; ++j) {
      for (std::size_t u = 0; u <= max_u; ++u) {
        current[j][u] = current[j - 1][u] + (u >= j ? previous[j][u - j] : 0.0);
      }
    }
    std::swap(previous, current);
  }
  return previous[inner];
}

// P(|U - mn/2| >= |u - mn/2|) from the exact distribution; u is an integer without ties.
double exact_two_sided_p(double u, std::size_t m, std::size_t n) {
  const std::size_t pairs = m * n;
  const std::size_t half = pairs / 2;
  const auto u_low = static_cast<std::size_t>(std::min(u, static_cast<double>(pairs) - u));
  const std::vector<double> counts = u_counts(m, n, half);
  // The distribution is symmetric about mn/2: the lower half counted twice is the total, less the
  // middle value when mn is even (it is its own mirror image).
  double lower_tail = 0.0;
  double lower_half = 0.0;
  for (std::size_t k = 0; k <= half; ++k) {
    lower_half += counts[k];
    if (k <= u_low) lower_tail += counts[k];
  }
  const double total = 2.0 * lower_half - (pairs % 2 == 0 ? counts[half] : 0.0);
  return std::min(1.0, 2.0 * lower_tail / total);
}

// Draws an index in [0, n) from the generator's raw 64-bit output, rejecting the values at and
// above the largest multiple of n so that every index is equally likely.
std::size_t draw_index(std::mt19937_64& generator, std::size_t n) {
  constexpr std::uint64_t largest = std::numeric_limits<std::uint64_t>::max();
  const std::uint64_t limit = largest - largest % n;
  for (;;) {
    const std::uint64_t x = generator();
    if (x < limit) return static_cast<std::size_t>(x % n);
  }
}

double resampled_median(const std::vector<double>& sample, std::mt19937_64& generator,
                        std::vector<double>& buffer) {
  buffer.resize(sample.size());
  for (double& x : buffer) x = sample[draw_index(generator, sample.size())];
  return median_in_place(buffer);
}

// Candidate over baseline for non-negative medians: x/0 is +inf, and 0/0 is 1 (equal medians).
double ratio_of(double candidate, double baseline) {
  if (baseline == 0.0) return candidate == 0.0 ? 1.0 : std::numeric_limits<double>::infinity();
  return candidate / baseline;
}

// The number of resamples in each tail of a percentile interval (see median_ratio_interval).
std::size_t tail_resamples(double confidence, std::size_t resamples) {
  // The tiny allowance keeps an exact product such as 2000 * 0.025 = 50 from rounding down to 49.
  return static_cast<std::size_t>(
      std::floor(static_cast<double>(resamples + 1) * (1.0 - confidence) / 2.0 + 1e-9));
}

std::string percent_change(double ratio) { return formatted("%+.1f%%", 100.0 * (ratio - 1.0)); }

void check_interval_options(double confidence, std::size_t resamples) {
  if (!(confidence > 0.0 && confidence < 1.0)) {
    throw ConfigError(compare_option("confidence") + " must lie strictly between 0 and 1, got " + formatted("%g", confidence) +
                      " (the default is 0.95)");
  }
  if (tail_resamples(confidence, resamples) == 0) {
    const auto needed = static_cast<std::size_t>(std::ceil(2.0 / (1.0 - confidence) - 1.0 - 1e-9));
    throw ConfigError(compare_option("resamples") + " = " + std::to_string(resamples) + " is too few for a " +
                      formatted("%g", 100.0 * confidence) + "% interval: each tail needs at least one "
                      "resample, so at least " + std::to_string(needed) + " (the default is 2000)");
  }
}

SampleSummary summary_of(std::span<const double> samples) {
  const SampleStatistics stats = summarize(samples, std::numeric_limits<double>::infinity());
  return {stats.count, samples.size(), stats.median, stats.mean, stats.rsd_pct};
}

// Why a row cannot be judged (too_few_samples or unstable), or nullopt when it can.
std::optional<std::pair<Verdict, std::string>> cannot_judge(const SampleComparison& c, bool negative_values,
                                                              const CompareOptions& options) {
  const std::pair<const char*, const SampleSummary*> sides[] = {{"baseline", &c.baseline},
                                                                {"candidate", &c.candidate}};
  for (const auto& [side, summary] : sides) {
    if (summary->count < options.min_samples) {
      const std::size_t nan_values = summary->measured - summary->count;
      return std::pair{Verdict::too_few_samples,
                       std::string(side) + " has " + std::to_string(summary->count) +
                           (summary->count == 1 ? " valid value" : " valid values") +
                           (nan_values ? " of " + std::to_string(summary->measured) + " (" +
                                             std::to_string(nan_values) + " NaN: runs that failed or recorded nothing)"
                                       : std::string()) +
                           ", fewer than " + compare_option("min_samples") + " (" +
                           std::to_string(options.min_samples) + ")"};
    }
  }
  if (const double smallest = std::min(1.0, 2 * smallest_one_sided_p(c.baseline.count, c.candidate.count));
      !(smallest < options.alpha))
    return std::pair{Verdict::too_few_samples,
                     "with " + std::to_string(c.baseline.count) + " and " + std::to_string(c.candidate.count) +
                         " valid values the U test cannot reach p < " + compare_option("alpha") + " (" +
                         formatted("%g", options.alpha) + "): its smallest p is " + formatted("%.2g", smallest) +
                         ", so no change could be shown; measure each side at least " +
                         std::to_string(values_for_significance(options.alpha)) + " times"};
  for (const auto& [side, summary] : sides) {
    if (summary->rsd_pct > options.max_rsd_pct) {
      return std::pair{Verdict::unstable, std::string(side) + " RSD " + formatted("%.1f%%", summary->rsd_pct) +
                                              " is above " + compare_option("max_rsd_pct") + " (" +
                                              formatted("%g%%", options.max_rsd_pct) +
                                              "): too noisy to judge; lock clocks or add warm-up runs"};
    }
  }
  if (negative_values)
    return std::pair{Verdict::unstable, std::string("negative values: a ratio of medians cannot say which side is better")};
  return std::nullopt;
}

Shift shift_of(std::span<const double> baseline, std::span<const double> candidate, const CompareOptions& options) {
  Shift s;
  const SampleSummary b = summary_of(baseline), c = summary_of(candidate);
  s.u_test = mann_whitney_u(candidate, baseline);
  const bool ratio_defined = b.count > 0 && c.count > 0 && !has_negative(baseline) && !has_negative(candidate);
  s.ratio = ratio_defined ? ratio_of(c.median, b.median) : nan;
  s.ratio_ci = median_ratio_interval(baseline, candidate, options.confidence, options.resamples, options.seed);
  const bool significant = s.u_test.p_value < options.alpha;
  const SameBand band = same_band(options.threshold_pct);
  s.rose = significant && s.ratio_ci.lower > band.upper;
  s.fell = significant && s.ratio_ci.upper < band.lower;
  return s;
}

std::string interval_text(const Interval& ci, const CompareOptions& options) {
  return formatted("%g", 100.0 * options.confidence) + "% CI " + percent_change(ci.lower) + " to " + percent_change(ci.upper);
}

double median_clock(std::span<const double> clocks) {
  return summarize(clocks, std::numeric_limits<double>::infinity()).median;
}

Verdict verdict_of_change(bool rose, MetricDirection direction) {
  switch (direction) {
    case MetricDirection::lower_is_better: return rose ? Verdict::slower : Verdict::faster;
    case MetricDirection::higher_is_better: return rose ? Verdict::faster : Verdict::slower;
    case MetricDirection::undefined: return Verdict::changed;
  }
  return Verdict::changed;
}

std::string ascii_lower(std::string_view text) {
  std::string lowered(text);
  for (char& ch : lowered) {
    if (ch >= 'A' && ch <= 'Z') ch = static_cast<char>(ch - 'A' + 'a');
  }
  return lowered;
}

bool contains_any(std::string_view text, std::initializer_list<std::string_view> needles) {
  return std::any_of(needles.begin(), needles.end(),
                     [&](std::string_view needle) { return text.find(needle) != std::string_view::npos; });
}

// Units of elapsed time, including clock cycles; "µs" in both of its Unicode spellings.
bool is_duration_unit(std::string_view unit) {
  constexpr std::string_view durations[] = {"ns",      "us",      "\u00b5s", "\u03bcs", "ms",      "s",
                                            "nsecond", "usecond", "msecond", "second",  "seconds", "cycle",
                                            "cycles"};
  return std::find(std::begin(durations), std::end(durations), unit) != std::end(durations);
}

// Anything per unit of time or per cycle, a frequency, or a percentage.
bool is_rate_unit(std::string_view unit) {
  if (unit == "%" || unit.ends_with("hz")) return true;
  const auto slash = unit.rfind('/');
  return slash != std::string_view::npos && is_duration_unit(unit.substr(slash + 1));
}

}  // namespace

double smallest_one_sided_p(std::size_t m, std::size_t n) {
  double p = 1;
  for (std::size_t k = 1; k <= m && p > 0; ++k) p *= static_cast<double>(k) / static_cast<double>(n + k);
  return p;
}

std::size_t values_for_significance(double alpha) {
  std::size_t n = 1;
  while (n < 1000 && !(2 * smallest_one_sided_p(n, n) < alpha)) ++n;
  return n;
}

std::string to_string(UTestMethod m) { return enum_name(m); }

UTestResult mann_whitney_u(std::span<const double> x, std::span<const double> y) {
  const std::vector<double> xs = sorted_valid_samples(x);
  const std::vector<double> ys = sorted_valid_samples(y);
  const std::size_t m = xs.size();
  const std::size_t n = ys.size();
  if (m == 0 || n == 0) return {nan, nan, UTestMethod::not_tested};

  // Midranks of the pooled sample; U_x = (sum of x's ranks) - m(m+1)/2. The tie term
  // sum(t^3 - t) over groups of t equal values corrects the variance.
  std::vector<std::pair<double, bool>> pooled;  // (value, is x)
  pooled.reserve(m + n);
  for (double v : xs) pooled.emplace_back(v, true);
  for (double v : ys) pooled.emplace_back(v, false);
  std::sort(pooled.begin(), pooled.end());
  double x_rank_sum = 0.0;
  double tie_term = 0.0;
  for (std::size_t first = 0; first < pooled.size();) {
    std::size_t last = first + 1;
    while (last < pooled.size() && pooled[last].first == pooled[first].first) ++last;
    const double group = static_cast<double>(last - first);
    const double midrank = 0.5 * static_cast<double>(first + 1 + last);
    for (std::size_t k = first; k < last; ++k) {
      if (pooled[k].second) x_rank_sum += midrank;
    }
    tie_term += group * group * group - group;
    first = last;
  }
  const double md = static_cast<double>(m);
  const double nd = static_cast<double>(n);
  const double u = x_rank_sum - md * (md + 1) / 2;

  if (tie_term == 0.0 && m * n <= exact_u_test_max_pairs) {
    return {u, exact_two_sided_p(u, m, n), UTestMethod::exact};
  }
  const double total = md + nd;
  const double variance = md * nd / 12.0 * ((total + 1) - tie_term / (total * (total - 1)));
  if (!(variance > 0.0)) return {u, 1.0, UTestMethod::normal_approximation};  // all values equal
  const double distance = std::abs(u - md * nd / 2) - 0.5;  // continuity correction
  const double p = std::min(1.0, 2.0 * normal_upper_tail(distance / std::sqrt(variance)));
  return {u, p, UTestMethod::normal_approximation};
}

Interval median_ratio_interval(std::span<const double> baseline, std::span<const double> candidate,
                               double confidence, std::size_t resamples, std::uint64_t seed) {
  check_interval_options(confidence, resamples);
  const std::vector<double> base = sorted_valid_samples(baseline);
  const std::vector<double> cand = sorted_valid_samples(candidate);
  if (base.empty() || cand.empty() || has_negative(base) || has_negative(cand)) return {nan, nan};

  std::mt19937_64 generator(seed);
  std::vector<double> ratios(resamples);
  std::vector<double> buffer;
  for (double& r : ratios) {
    const double base_median = resampled_median(base, generator, buffer);
    r = ratio_of(resampled_median(cand, generator, buffer), base_median);
  }
  std::sort(ratios.begin(), ratios.end());
  const std::size_t tail = tail_resamples(confidence, resamples);
  return {ratios[tail - 1], ratios[resamples - tail]};
}

MetricDirection infer_metric_direction(std::string_view name, std::string_view unit) {
  const std::string metric = ascii_lower(name);
  std::string_view u = unit;
  while (!u.empty() && u.front() == ' ') u.remove_prefix(1);
  while (!u.empty() && u.back() == ' ') u.remove_suffix(1);
  const std::string unit_lower = ascii_lower(u);

  if (contains_any(metric, {"stall"})) return MetricDirection::lower_is_better;
  if (is_duration_unit(unit_lower)) return MetricDirection::lower_is_better;
  if (is_rate_unit(unit_lower)) return MetricDirection::higher_is_better;
  if (contains_any(metric, {"pct_of_peak", "throughput", "per_second", "per_cycle", "bandwidth", "flops"})) {
    return MetricDirection::higher_is_better;
  }
  if (contains_any(metric, {"duration", "time", "cycles_elapsed", "latency"})) {
    return MetricDirection::lower_is_better;
  }
  return MetricDirection::undefined;
}

double u_test_p_greater(std::span<const double> x, std::span<const double> y) {
  const std::vector<double> xs = sorted_valid_samples(x);
  const std::vector<double> ys = sorted_valid_samples(y);
  const std::size_t m = xs.size(), n = ys.size();
  if (m == 0 || n == 0) return nan;
  // The pairs x wins outright: a tie counts against "larger", which can only raise p (as breaking
  // every tie against the alternative does), so the test stays at its level with tied samples too.
  std::size_t u = 0;
  for (double v : xs) u += static_cast<std::size_t>(std::lower_bound(ys.begin(), ys.end(), v) - ys.begin());
  const std::size_t pairs = m * n;
  if (pairs <= exact_u_test_max_pairs) {
    // P(U >= u) = P(U <= mn - u) by symmetry, over the (m + n choose m) orderings.
    const std::vector<double> counts = u_counts(m, n, pairs - u);
    double orderings = 1;
    for (std::size_t k = 1; k <= std::min(m, n); ++k)
      orderings = orderings * static_cast<double>(m + n - std::min(m, n) + k) / static_cast<double>(k);
    return std::min(1.0, std::accumulate(counts.begin(), counts.end(), 0.0) / orderings);
  }
  const double md = static_cast<double>(m), nd = static_cast<double>(n);
  const double distance = static_cast<double>(u) - md * nd / 2 - 0.5;  // continuity correction
  return normal_upper_tail(distance / std::sqrt(md * nd * (md + nd + 1) / 12));
}

MedianInterval median_interval(std::vector<double> values, double confidence) {
  MedianInterval out;
  std::erase_if(values, [](double v) { return std::isnan(v); });
  if (values.empty()) return out;
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  out.median = n % 2 ? values[n / 2] : std::midpoint(values[n / 2 - 1], values[n / 2]);
  // P(B < k) for B ~ Binomial(n, 1/2), k = 1, 2, ...: the largest k whose tail stays within alpha/2.
  const double half_alpha = (1 - confidence) / 2;
  double below = 0;  // P(B < k)
  double term = std::pow(0.5, static_cast<double>(n));  // P(B = k - 1)
  std::size_t k = 0;
  for (std::size_t candidate = 1; candidate <= n / 2; ++candidate) {
    below += term;  // now P(B <= candidate - 1) = P(B < candidate)
    if (below > half_alpha) break;
    k = candidate;
    term *= static_cast<double>(n - (candidate - 1)) / static_cast<double>(candidate);
  }
  if (k == 0) return out;
  out.lower = values[k - 1];
  out.upper = values[n - k];
  return out;
}

bool is_time_unit(std::string_view unit) {
  const std::string lowered = ascii_lower(unit);
  return is_duration_unit(lowered) && !lowered.starts_with("cycle");
}

std::vector<double> cycles_of(std::span<const double> durations, std::span<const double> sm_clocks_mhz) {
  std::vector<double> cycles(durations.size(), nan);
  for (std::size_t i = 0; i < durations.size() && i < sm_clocks_mhz.size(); ++i) cycles[i] = durations[i] * sm_clocks_mhz[i];
  return cycles;
}

bool clocks_vary(std::span<const double> baseline, std::span<const double> baseline_clocks,
                 std::span<const double> candidate, std::span<const double> candidate_clocks) {
  std::optional<double> first;
  bool vary = false;
  const auto scan = [&](std::span<const double> values, std::span<const double> clocks) {
    for (std::size_t i = 0; i < values.size(); ++i) {
      if (std::isnan(values[i])) continue;
      if (i >= clocks.size() || std::isnan(clocks[i])) return false;  // a valid duration without its clock
      if (!first) first = clocks[i];
      vary = vary || clocks[i] != *first;
    }
    return true;
  };
  return scan(baseline, baseline_clocks) && scan(candidate, candidate_clocks) && vary;
}

SampleComparison compare_samples(std::span<const double> baseline, std::span<const double> candidate,
                                 MetricDirection direction, const CompareOptions& options, const SampleClocks* clocks) {
  SampleComparison c;
  c.baseline = summary_of(baseline);
  c.candidate = summary_of(candidate);
  const Shift time = shift_of(baseline, candidate, options);
  c.u_test = time.u_test;
  c.ratio = time.ratio;
  c.ratio_ci = time.ratio_ci;
  if (const auto why = cannot_judge(c, has_negative(baseline) || has_negative(candidate), options)) {
    std::tie(c.verdict, c.reason) = *why;
    return c;
  }
  if (clocks && clocks_vary(baseline, clocks->baseline, candidate, clocks->candidate))
    c.cycles = shift_of(cycles_of(baseline, clocks->baseline), cycles_of(candidate, clocks->candidate), options);
  const std::string interval = interval_text(c.ratio_ci, options);
  const std::string p = "p = " + formatted("%.2g", c.u_test.p_value);
  if (time.rose || time.fell) {
    c.reason = "median " + percent_change(c.ratio) + " (" + interval + "), " + p;
    if (!c.cycles) {
      c.verdict = verdict_of_change(time.rose, direction);
      return c;
    }
    const std::string in_cycles = "in cycles (duration \u00d7 SM clock) " + percent_change(c.cycles->ratio) + " (" +
                                  interval_text(c.cycles->ratio_ci, options) + "), p = " +
                                  formatted("%.2g", c.cycles->u_test.p_value);
    if (c.cycles->rose == time.rose && c.cycles->fell == time.fell) {
      c.verdict = verdict_of_change(time.rose, direction);
      c.reason += "; " + in_cycles;
      return c;
    }
    c.verdict = Verdict::ambiguous;
    c.reason = "in time " + c.reason + ", but " + in_cycles + " does not show the same change: the SM clocks " +
               "differ (median " + formatted("%.0f", median_clock(clocks->baseline)) + " MHz in the baseline, " +
               formatted("%.0f", median_clock(clocks->candidate)) + " MHz in the candidate) and can explain it; lock " +
               "the clocks on both sides (" + spell("ClockControl::base", "clock_control='base'") + ")";
    return c;
  }
  c.verdict = Verdict::same;
  if (!(c.u_test.p_value < options.alpha))
    c.reason = "not significant: " + p + " is not below alpha " + formatted("%g", options.alpha) + " (median " +
               percent_change(c.ratio) + ", " + interval + ")";
  else
    c.reason = "within threshold: the " + interval + " does not lie outside " +
               band_text(same_band(options.threshold_pct)) + " (median " + percent_change(c.ratio) + ", " + p + ")";
  return c;
}

std::string compare_option(const std::string& field) {
  switch (caller()) {
    case Caller::cpp: return "CompareOptions::" + field;
    case Caller::python: return field;
    case Caller::command_line: break;
  }
  // kscope compare's flags; the options it has no flag for keep their defaults.
  static const std::map<std::string, std::string> flags{
      {"threshold_pct", "--threshold"}, {"alpha", "--alpha"}, {"min_samples", "--min-samples"},
      {"max_rsd_pct", "--max-rsd"},     {"directions", "--direction"}};
  const auto flag = flags.find(field);
  return flag == flags.end() ? field : flag->second;
}

std::span<const EnumName<UTestMethod>> enum_names(UTestMethod) {
  using U = UTestMethod;
  static constexpr EnumName<U> names[] = {
      {U::exact, "exact"}, {U::normal_approximation, "normal approximation"}, {U::not_tested, "not tested"}};
  return names;
}

std::span<const EnumName<Verdict>> enum_names(Verdict) {
  using V = Verdict;
  // The worst first: the order kscope compare counts them in.
  static constexpr EnumName<V> names[] = {{V::slower, "slower"},
                                          {V::faster, "faster"},
                                          {V::same, "same"},
                                          {V::changed, "changed"},
                                          {V::ambiguous, "ambiguous"},
                                          {V::unstable, "unstable"},
                                          {V::too_few_samples, "too_few_samples"},
                                          {V::only_in_baseline, "only_in_baseline"},
                                          {V::only_in_candidate, "only_in_candidate"}};
  return names;
}

std::span<const EnumName<MetricDirection>> enum_names(MetricDirection) {
  using D = MetricDirection;
  static constexpr EnumName<D> names[] = {
      {D::lower_is_better, "lower"}, {D::higher_is_better, "higher"}, {D::undefined, "undefined"}};
  return names;
}

}  // namespace kscope::detail

namespace kscope {

// Each bound written as a ratio of the sides is (100 + t over 100, 100 over 100 + t), so that 102
// against 100, and 100 against 102, sit exactly on a bound.
SameBand same_band(double threshold_pct) {
  return {100.0 / (100.0 + threshold_pct), (100.0 + threshold_pct) / 100.0};
}

std::string band_text(const SameBand& band) {
  const auto change = [](double ratio) { return detail::formatted("%+.3g%%", 100.0 * (ratio - 1.0)); };
  return "[" + change(band.lower) + ", " + change(band.upper) + "]";
}

std::string to_string(MetricDirection d) {
  return d == MetricDirection::undefined ? "undefined" : detail::enum_name(d) + " is better";
}

std::string to_string(Verdict v) { return detail::enum_name(v); }

void CompareOptions::validate() const {
  using detail::compare_option;
  using detail::formatted;
  if (!(threshold_pct >= 0.0 && threshold_pct < 100.0)) {
    throw ConfigError(compare_option("threshold_pct") + " must be a percentage from 0 up to (not including) 100, got " +
                      formatted("%g", threshold_pct) + " (the default is 2)");
  }
  if (!(alpha > 0.0 && alpha < 1.0)) {
    throw ConfigError(compare_option("alpha") + " must lie strictly between 0 and 1, got " + formatted("%g", alpha) +
                      " (the default is 0.05)");
  }
  if (min_samples == 0) {
    throw ConfigError(compare_option("min_samples") +
                      " is 0; at least one valid value per side is needed (the default is 5)");
  }
  if (!(max_rsd_pct > 0.0)) {
    throw ConfigError(compare_option("max_rsd_pct") + " must be a positive percentage, got " +
                      formatted("%g", max_rsd_pct) + " (the default is 10; infinity turns the check off)");
  }
  detail::check_interval_options(confidence, resamples);
}

}  // namespace kscope

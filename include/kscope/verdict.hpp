#pragma once
// The verdict on a change between two sets of samples of one metric (compare(), and evaluate's and
// tune's "same"): which way a metric is better, the verdicts, the band within which two quantities
// are the same, and the options of the judgement (src/core/statistics/significance.cpp).
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>

namespace kscope {

// Whether a metric improves by falling (durations, stalls) or rising (throughput, FLOP/s, % of
// peak). undefined: a count of work (bytes, instructions), which a verdict calls `changed`.
enum class MetricDirection { lower_is_better, higher_is_better, undefined };
std::string to_string(MetricDirection d);  // "lower is better", "higher is better", "undefined"

enum class Verdict {
  faster,             // a significant change beyond the threshold, for the better (confirmed in cycles, see below)
  slower,             // the same, for the worse
  same,               // not significant, or within the threshold
  unstable,           // an RSD above max_rsd_pct, negative values, or units differ
  changed,            // a significant change of a metric without a direction
  only_in_baseline,   // the row exists on one side only (an annotation, config or metric added or removed)
  only_in_candidate,
  // A duration faster or slower in time whose SM clocks varied, but not the same in cycles (duration
  // times the SM clock observed around each run): the clocks can explain the change.
  ambiguous,
  too_few_samples,    // a side has fewer than min_samples valid values (results of runs = 1), or too few
                      // for the U test to reach p < alpha: cannot judge
};
std::string to_string(Verdict v);  // the enumerator's name

// Two positive quantities are the same within threshold_pct (t%) when their ratio lies in
// [1 / (1 + t/100), 1 + t/100]: a band symmetric in the logarithm of the ratio. It is the one
// meaning of compare (the ratio of medians, candidate / baseline), evaluate (the speedup,
// reference / candidate) and tune (a config against the leader or the winner), because
// - a shift by a factor and the shift back by the same factor are treated alike:
//   |log ratio| <= log(1 + t/100), the scale on which durations and rates multiply;
// - swapping the sides inverts the ratio and maps the band onto itself, so the verdict mirrors
//   (faster <-> slower, same stays same). With [1 - t, 1 + t] a pair 2.04% apart would be slower one
//   way (1.0204 > 1.02) and the same the other (0.98 is within it).
struct SameBand {
  double lower = 1;  // 1 / (1 + t/100)
  double upper = 1;  // 1 + t/100
};
SameBand same_band(double threshold_pct);
// "[-1.96%, +2%]": the band as changes.
std::string band_text(const SameBand& band);

// The verdict of a row (ratio = median(candidate) / median(baseline), CI its bootstrap interval):
// too_few_samples when either side has fewer than min_samples valid values, or too few for the U test
// to reach p < alpha whatever the samples (1 against 1, say); unstable when one has an
// RSD above max_rsd_pct; otherwise a change only when p < alpha AND the whole CI lies beyond
// same_band(threshold_pct) (strictly), and same in every other case. A duration whose samples' SM
// clocks are known and not all the same is changed only when its cycles (duration times the clock
// of its run) change the same way by the same test; otherwise it is ambiguous. The defaults, and why:
// - threshold_pct = 2: kscope's stable_rsd_pct default; a shift smaller than what one stable row
//   spreads by is not worth a verdict, and it covers the drift between sessions (board
//   temperature, clocks when unlocked) that the samples of one session cannot see. The measured
//   noise enters through the CI, whose width grows with the RSD and shrinks with more runs
//   (NVBench's compare uses the noise itself as the threshold, which never tightens with more
//   runs). docs/compare.md gives the session-to-session noise measured on an H200.
// - alpha = 0.05: Google Benchmark's compare.py, which runs the same two-sided U test.
// - min_samples = 5: NVBench's minimum for a noise estimate; with 5 values per side the exact U
//   test reaches p = 0.008, so a real change can be significant.
// - max_rsd_pct = 10: five times stable_rsd_pct. A row that noisy is dominated by something other
//   than the kernel (contention, throttling); the U test's premise that the runs are exchangeable
//   no longer holds, so no verdict is given. Locking clocks or more warm-up usually cures it.
// - confidence = 0.95, resamples = 2000: the usual percentile-bootstrap count for a 95% interval
//   (Efron & Tibshirani); each tail then holds 50 resamples, so the bounds move by well under
//   the interval's width between seeds, and it costs 2000 * (n_baseline + n_candidate) draws.
// - seed: std::mt19937_64's default seed, fixed so that comparing the same files again gives the
//   same interval.
struct CompareOptions {
  double threshold_pct = 2.0;     // a change within this is `same`
  double alpha = 0.05;            // the U test's level
  std::size_t min_samples = 5;    // fewer valid samples on a side: too_few_samples
  double max_rsd_pct = 10.0;      // a noisier side: unstable
  double confidence = 0.95;       // of the bootstrap interval
  std::size_t resamples = 2000;   // of the bootstrap
  std::uint64_t seed = 5489;  // std::mt19937_64's default seed
  // Per metric name, overriding the direction inferred from the metric's name and unit.
  std::map<std::string, MetricDirection> directions{};

  // Throws ConfigError naming the bad option, its value and its default.
  void validate() const;
};

}  // namespace kscope

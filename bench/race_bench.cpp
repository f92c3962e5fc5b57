// Does kscope decide right, and at what cost? On the simulated backend with realistic noise
// (kscope/simulated_noise.hpp), against the known truth of the simulated kernels:
//   racing:  over many seeds of a 64-config space, how often kscope::tune returns the true best or a
//            config within the threshold of it, and its runs against the exhaustive sweep's;
//   A/A:     how often kscope::compare calls a kernel measured twice faster or slower, and how often
//            a race of identical configs declares one slower (both should stay at or below alpha).
// Prints the figures with met / missed against issue 38's targets (>= 99% of seeds, <= 30% of the
// runs, A/A rates <= alpha) and exits 1 when one is missed. CPU only.
//   race_bench [--seeds N] [--trials N] [--show SEED]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <random>
#include <string>
#include <vector>

#include "core/statistics/significance.hpp"
#include "kscope/annotation.hpp"
#include "kscope/compare.hpp"
#include "kscope/profile.hpp"
#include "kscope/testing.hpp"
#include "kscope/tune.hpp"

namespace {

using kscope::testing::KernelNoise;
using kscope::testing::SimulatedBackend;
using kscope::testing::SimulatedNoise;

constexpr std::size_t kConfigs = 64;
constexpr std::size_t kRuns = 100;  // the exhaustive sweep's runs per config
constexpr double kThresholdPct = 2;
constexpr double kAlpha = 0.05;

// The GPU-wide noise of every scenario: a slow drift of +-1% the clock readings do not show, and the
// SM clock dropping 11% (1980 -> 1755 MHz) twice a simulated second for 20 ms on average.
SimulatedNoise device_noise(std::uint64_t seed) {
  SimulatedNoise n;
  n.seed = seed;
  n.drift_pct = 1;
  n.drift_period_s = 1;
  n.clock_drops_per_s = 2;
  n.dropped_sm_clock_mhz = 1755;
  n.clock_drop_s = 0.02;
  n.run_overhead_s = 100e-6;
  n.kernel = {1.5, 0.01, 1.5, 0.7};
  return n;
}

std::string kernel_name(std::size_t i) { return std::string("k").append(std::to_string(i)); }

// One seed's space: kernel "k<i>" takes base[i] ns without noise. The best is 50 us at a random
// position; the others are slower by an exponential share of mean 35% (about 3 within 2% of the best,
// as tile-size spaces of a matmul tend to have), each with its own jitter (0.5-3%), outliers (up to 2%
// of runs, 1.2-2x) and share of time that follows the SM clock (0.3-1).
struct Space {
  std::vector<double> base;
  SimulatedNoise noise;
};

Space space_of(std::uint64_t seed) {
  std::mt19937_64 rng(seed * 7919 + 17);
  std::uniform_real_distribution<double> u(0, 1);
  std::exponential_distribution<double> spread(1 / 0.35);
  Space s;
  s.noise = device_noise(seed);
  const std::size_t best = static_cast<std::size_t>(u(rng) * kConfigs) % kConfigs;
  for (std::size_t i = 0; i < kConfigs; ++i) {
    s.base.push_back(50000 * (i == best ? 1 : 1 + spread(rng)));
    s.noise.per_kernel[kernel_name(i)] =
        KernelNoise{0.5 + 2.5 * u(rng), 0.02 * u(rng), 1.2 + 0.8 * u(rng), 0.3 + 0.7 * u(rng)};
  }
  return s;
}

kscope::Settings settings_of(std::size_t runs) {
  kscope::Settings s;
  s.runs = runs;
  s.warmup_runs = 1;
  s.verbosity = kscope::Verbosity::quiet;
  return s;
}

kscope::Sweep sweep_of(std::size_t configs) {
  std::vector<kscope::Value> i;
  for (std::size_t c = 0; c < configs; ++c) i.push_back(static_cast<std::int64_t>(c));
  return kscope::Sweep().axis("i", i);
}

kscope::Body body_of(SimulatedBackend& sim, const std::vector<double>& base, bool own_kernel_names = true) {
  return [&sim, &base, own_kernel_names](const kscope::Config& c) {
    const auto i = static_cast<std::size_t>(c.get<std::int64_t>("i"));
    kscope::Annotation a("k");
    sim.launch(own_kernel_names ? kernel_name(i) : "k", base[i]);
  };
}

const char* verdict(bool met) { return met ? "met" : "MISSED"; }

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

struct RaceFigures {
  std::size_t right = 0, exact = 0, runs = 0, exhaustive_runs = 0;
  std::vector<std::uint64_t> wrong;  // seeds whose winner is more than the threshold from the best
  std::vector<double> runs_share;  // per seed
  std::uint64_t costliest_seed = 0;
};

RaceFigures race_seeds(std::size_t seeds, std::uint64_t show) {
  RaceFigures f;
  for (std::uint64_t seed = 1; seed <= seeds; ++seed) {
    const Space space = space_of(seed);
    SimulatedBackend sim;
    sim.set_noise(space.noise);
    const kscope::Race race = kscope::tune_with_backend(sweep_of(kConfigs), settings_of(kRuns),
                                                        body_of(sim, space.base), {}, sim);
    const double best = *std::min_element(space.base.begin(), space.base.end());
    const double chosen = space.base[race.winner()];
    if (chosen <= best * (1 + kThresholdPct / 100)) ++f.right;
    else f.wrong.push_back(seed);
    f.exact += chosen == best;
    f.runs += race.cost().runs;
    f.exhaustive_runs += race.cost().exhaustive_runs;
    const double share = static_cast<double>(race.cost().runs) / static_cast<double>(race.cost().exhaustive_runs);
    if (f.runs_share.empty() || share > *std::max_element(f.runs_share.begin(), f.runs_share.end()))
      f.costliest_seed = seed;
    f.runs_share.push_back(share);
    if (seed == show) std::cout << race << "\n";
  }
  return f;
}

// A/A: the same kernel measured twice (two sessions, one after the other on the same GPU), compared.
struct AAFigures {
  std::size_t differences = 0, ambiguous = 0, time_only_differences = 0;
};

// With `clock_changes`, the SM clock drops 100 times a simulated second for 3 ms (low about a quarter of
// the time), so that the two sessions (about 5 ms each) ran at different mixes of clocks; without, it
// never drops.
AAFigures compare_aa(std::size_t trials, double threshold_pct, bool clock_changes) {
  AAFigures f;
  kscope::CompareOptions options;
  options.threshold_pct = threshold_pct;
  const std::vector<double> base{50000};
  for (std::uint64_t trial = 1; trial <= trials; ++trial) {
    SimulatedNoise noise = device_noise(trial);
    noise.clock_drops_per_s = clock_changes ? 100 : 0;
    noise.clock_drop_s = 0.003;
    SimulatedBackend sim;
    sim.set_noise(noise);
    const auto sweep = sweep_of(1);
    const kscope::Results a = kscope::profile_with_backend(sweep, settings_of(30), body_of(sim, base, false), sim);
    const kscope::Results b = kscope::profile_with_backend(sweep, settings_of(30), body_of(sim, base, false), sim);
    const kscope::ComparisonRow& row = kscope::compare(a, b, options).rows.at(0);
    f.differences += row.verdict == kscope::Verdict::faster || row.verdict == kscope::Verdict::slower;
    f.ambiguous += row.verdict == kscope::Verdict::ambiguous;
    // What a verdict from the durations alone would have said.
    std::vector<double> va, vb;
    for (const kscope::SampleRow& s : a.samples()) va.push_back(s.value);
    for (const kscope::SampleRow& s : b.samples()) vb.push_back(s.value);
    const auto time_only =
        kscope::detail::compare_samples(va, vb, kscope::MetricDirection::lower_is_better, options).verdict;
    f.time_only_differences += time_only == kscope::Verdict::faster || time_only == kscope::Verdict::slower;
  }
  return f;
}

// A race of identical configs: any config declared eliminated or slower is a false difference.
std::size_t race_aa(std::size_t trials, std::size_t configs) {
  std::size_t false_differences = 0;
  const std::vector<double> base(configs, 50000);
  for (std::uint64_t trial = 1; trial <= trials; ++trial) {
    SimulatedBackend sim;
    sim.set_noise(device_noise(trial));
    const kscope::Race race =
        kscope::tune_with_backend(sweep_of(configs), settings_of(kRuns), body_of(sim, base, false), {}, sim);
    false_differences += std::any_of(race.rows().begin(), race.rows().end(), [](const kscope::RaceRow& r) {
      return r.outcome == kscope::RaceOutcome::eliminated || r.outcome == kscope::RaceOutcome::slower;
    });
  }
  return false_differences;
}

std::size_t count_flag(int argc, char** argv, const std::string& flag, std::size_t fallback) {
  for (int i = 1; i + 1 < argc; ++i)
    if (argv[i] == flag) return static_cast<std::size_t>(std::strtoull(argv[i + 1], nullptr, 10));
  return fallback;
}

}  // namespace

int main(int argc, char** argv) {
  const std::size_t seeds = count_flag(argc, argv, "--seeds", 200);
  const std::size_t trials = count_flag(argc, argv, "--trials", 200);
  bool all_met = true;
  const auto start = std::chrono::steady_clock::now();
  const auto rate = [](std::size_t n, std::size_t of) { return 100.0 * static_cast<double>(n) / static_cast<double>(of); };

  std::printf("racing: %zu seeds of a %zu-config space; runs = %zu (the exhaustive sweep: %zu configs x (1 warm-up "
              "+ %zu) runs); threshold %g%%, alpha %g\n", seeds, kConfigs, kRuns, kConfigs, kRuns, kThresholdPct, kAlpha);
  const RaceFigures r = race_seeds(seeds, count_flag(argc, argv, "--show", 0));
  const double right = rate(r.right, seeds), share = rate(r.runs, r.exhaustive_runs);
  std::printf("  winner is the true best or within %g%% of it: %zu of %zu seeds (%.1f%%; the true best itself: %zu)"
              "   target >= 99%%: %s\n", kThresholdPct, r.right, seeds, right, r.exact, verdict(right >= 99));
  for (const std::uint64_t seed : r.wrong) std::printf("    seed %llu: a winner beyond the threshold\n", static_cast<unsigned long long>(seed));
  std::vector<double> shares = r.runs_share;
  std::sort(shares.begin(), shares.end());
  const auto percentile = [&](double q) { return 100 * shares[static_cast<std::size_t>(q * (shares.size() - 1))]; };
  const std::size_t within = static_cast<std::size_t>(std::count_if(shares.begin(), shares.end(), [](double x) { return x <= 0.3; }));
  std::printf("  runs: %zu of the exhaustive sweeps' %zu (%.1f%%)   target <= 30%%: %s\n", r.runs, r.exhaustive_runs,
              share, verdict(share <= 30));
  std::printf("  runs per seed: median %.1f%%, 90th percentile %.1f%%, most %.1f%% (seed %llu; --show %llu prints its race); "
              "%zu of %zu seeds within 30%%\n", percentile(0.5), percentile(0.9), percentile(1),
              static_cast<unsigned long long>(r.costliest_seed), static_cast<unsigned long long>(r.costliest_seed),
              within, seeds);
  all_met = all_met && right >= 99 && share <= 30;

  std::printf("A/A, compare: one 50 us kernel measured twice (30 runs each, two sessions in a row), %zu trials; "
              "a false difference is a faster or slower verdict\n", trials);
  for (const bool clock_changes : {false, true})
    for (const double threshold : {kThresholdPct, 0.0}) {
      const AAFigures f = compare_aa(trials, threshold, clock_changes);
      const double rate_pct = rate(f.differences, trials);
      const bool gated = threshold == kThresholdPct;  // the default is what the target is about
      std::printf("  %-32s threshold %g%%: false differences %5.1f%% (ambiguous %4.1f%%; from durations alone %5.1f%%)%s\n",
                  clock_changes ? "jitter, outliers, drift, clocks:" : "jitter, outliers, drift:", threshold, rate_pct,
                  rate(f.ambiguous, trials), rate(f.time_only_differences, trials),
                  gated ? (rate_pct <= 100 * kAlpha ? "   target <= 5%: met" : "   target <= 5%: MISSED") : "");
      all_met = all_met && (!gated || rate_pct <= 100 * kAlpha);
    }

  const std::size_t identical = 16;
  const std::size_t aa_races = std::max<std::size_t>(trials / 4, 1);
  const std::size_t false_races = race_aa(aa_races, identical);
  const double race_rate = rate(false_races, aa_races);
  std::printf("A/A, racing: %zu identical configs, %zu races; a false difference is any config eliminated or slower: "
              "%zu (%.1f%%)   target <= 5%%: %s\n", identical, aa_races, false_races, race_rate,
              verdict(race_rate <= 100 * kAlpha));
  all_met = all_met && race_rate <= 100 * kAlpha;
  std::printf("%.1f s\n", seconds_since(start));
  return all_met ? 0 : 1;
}

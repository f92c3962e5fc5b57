#pragma once
// Choosing the fastest config of a sweep with confidence, in a fraction of the runs of measuring every
// config Settings::runs times: tune() races the configs.
//
//   kscope::Race race = kscope::tune(sweep, settings, body);   // settings.runs: the most a config gets
//   race.winner();  race.ties();  std::cout << race;          // the decision, then every config's fate
//
// 1. Screening: every config is measured RaceOptions::first_runs times (after its warm-ups).
// 2. Elimination, after every round but the final: the leader is the config with the lowest median
//    duration; a config is dropped when a one-sided Mann-Whitney U test (exact; ties count against
//    dropping) shows it slower than the leader's durations times 1 + threshold_pct/100, at the level
//    alpha / 2 / ((K - 1) * R) (K configs raced, R the looks the race may take, fixed in advance by
//    doubling first_runs up to Settings::runs): a Bonferroni bound over every test that could drop
//    the fastest config, whichever config leads each look, so the fastest config is dropped with a
//    probability of at most alpha / 2. Where the SM clocks observed around the runs vary, the test
//    must also pass in cycles (duration times the clock), so that a clock drop cannot drop a config.
// 3. Racing rounds, while more than max_finalists survive: the leader and the survivors whose median
//    lies beyond it by more than the threshold (those more runs can show slower) double their runs,
//    up to Settings::runs; the leader's near-ties wait for the final.
// 4. Final: the survivors (the max_finalists lowest medians; any others are left_out) run
//    interleaved (f1, f2, ..., fF, then again, final_runs passes, each in its own order), so that
//    each pass compares them under the same conditions; with cache_control all its visits take no
//    warm-up (each config warmed up in the screening round, and every run starts from a flushed L2).
//    The winner has the lowest median of its durations relative to each pass's mean; every other
//    finalist gets the median of its per-pass ratio to the winner and its distribution-free interval
//    at 1 - alpha / 2 / (F - 1): a finalist whose interval lies wholly beyond 1 + threshold_pct/100
//    (in cycles too where clocks varied) is slower, every other one is tied: it cannot be told apart
//    from the winner within the threshold.
// With confidence 1 - alpha, the fastest config is the winner or one of its ties (or left_out, when
// more than max_finalists configs stayed within the threshold of the leader).
//
// Every round is a sweep of its own (a Session over the configs it visits), so output_prefix, resume
// and the thermal guard work as for profile(): round k streams under output_prefix + "round-<k>-",
// and a resumed race reads the rounds back, takes the same decisions from the same samples, and goes
// on where it stopped. A shard (Settings::shard, KSCOPE_SHARD) races its own configs only: the final
// decision needs every finalist measured side by side on one GPU, which shards on other GPUs cannot
// give; race the shards' winners and ties again in one process (docs/tune.md).
#include <cmath>
#include <cstddef>
#include <iosfwd>
#include <string>
#include <vector>

#include "kscope/profile.hpp"
#include "kscope/results.hpp"
#include "kscope/columns.hpp"
#include "kscope/table.hpp"

namespace kscope {

// How tune() races: the threshold and error level of its decisions and the sizes of its rounds.
struct RaceOptions {
  double threshold_pct = 2.0;  // configs within this of the winner are ties; eliminations need more than this
  double alpha = 0.05;         // the chance that the fastest config ends neither winner nor tie, at most
  std::size_t first_runs = 10;     // recorded runs of every config in the first round
  std::size_t final_runs = 20;     // interleaved passes of the final round
  std::size_t max_finalists = 8;   // racing goes on while more configs than this survive; the final takes at most this many
  std::string annotation;          // the annotation whose duration decides; empty: the body's only one

  // Throws ConfigError naming the bad option, its value and what it accepts.
  void validate() const;
};

enum class RaceOutcome {
  winner,
  tied,        // a finalist that cannot be told apart from the winner within the threshold
  slower,      // a finalist slower than the winner by more than the threshold
  eliminated,  // dropped in a racing round: slower than the leader then by more than the threshold
  left_out,    // not separated from the leader, but left out of the final: max_finalists others had lower medians
};
std::string to_string(RaceOutcome outcome);

// A raced config's fate: its outcome, in which round, after how many runs, and why.
struct RaceRow {
  std::size_t config_index = 0;  // into the sweep's configs
  RaceOutcome outcome = RaceOutcome::eliminated;  // winner, tied, slower, eliminated or left_out
  std::size_t round = 0;         // 1-based: the round it was eliminated after, or the last it ran in
  std::size_t runs = 0;          // recorded runs over every round
  double median_ns = NAN;        // of all its recorded durations
  double final_median_ns = NAN;  // in the final round (finalists)
  // Against the winner: finalists the median of the per-pass ratios and its interval; other configs
  // the ratio of their medians (no interval).
  double ratio = NAN, ratio_ci_lower = NAN, ratio_ci_upper = NAN;
  std::string reason;            // one line: why this outcome, with the numbers that decided it
};

// One round of the race.
struct RaceRound {
  std::string kind;          // "screening", "racing" or "final"
  std::size_t configs = 0;   // configs it visited
  std::size_t runs = 0;      // recorded runs it gave each (the final round: its interleaved passes)
  std::size_t eliminated = 0;  // configs dropped after it
};

// What the race spent, against the exhaustive sweep (every raced config warmup_runs + runs times).
struct RaceCost {
  std::size_t runs = 0;              // warm-ups included
  std::size_t exhaustive_runs = 0;  // what the exhaustive sweep would run, warm-ups included
  double gpu_s = 0;                  // recorded durations, plus each visit's warm-ups at its mean duration
  double exhaustive_gpu_s = 0;       // each config's mean duration times its warmup_runs + runs
  double wall_s = 0;                 // host time of the race
};

// What tune() returns: the winner, its ties, each config's row, the rounds and the cost.
class Race {
 public:
  Race() = default;
  // Made by tune().
  Race(Results measurements, std::vector<RaceRow> rows, std::vector<RaceRound> rounds, RaceCost cost,
       RaceOptions options);

  // Every recorded run of every round, by the sweep's configs (Results::configs() is the sweep's).
  const Results& measurements() const { return measurements_; }
  const std::vector<RaceRow>& rows() const { return rows_; }  // the raced configs, in the sweep's order
  const std::vector<RaceRound>& rounds() const { return rounds_; }  // in the order they ran
  const RaceCost& cost() const { return cost_; }  // against the exhaustive sweep of the same runs
  const RaceOptions& options() const { return options_; }  // as tune() was given them
  // 1 - alpha: the confidence that the fastest config is the winner or one of its ties.
  double confidence() const { return 1 - options_.alpha; }

  std::size_t winner() const;               // config index
  std::vector<std::size_t> ties() const;    // config indices, in the sweep's order

  // One row per raced config: the axes, then race_columns().
  Table table() const;
  // With output_prefix, tune() writes the measurements (write_all) and this table as <prefix>race.csv.
  void write_csv(const std::string& path) const;
  // The lines printed above the table: the session, the decision, the cost and the rounds.
  std::string heading() const;

 private:
  Results measurements_;
  std::vector<RaceRow> rows_;
  std::vector<RaceRound> rounds_;
  RaceCost cost_;
  RaceOptions options_;
};

// The columns of Race::table() after the config axes: Outcome, Round, Runs, MedianNs, FinalMedianNs,
// RatioToWinner, RatioCI_Lower, RatioCI_Upper, Reason.
const std::vector<ColumnSpec>& race_columns();

// The decision, the cost against the exhaustive sweep, the rounds, then the table.
std::ostream& operator<<(std::ostream& out, const Race& race);

// Races the sweep's configs (module docs above). `settings` are the measurement's: runs (the most a
// config gets in racing rounds, and the exhaustive sweep's count), warmup_runs (before every visit of
// a config), backend (one that measures durations: cupti, the default, events), cache_control,
// clock_control, the thermal guard, output_prefix, resume, overwrite, fsync_interval_s, shard,
// verbosity, progress_observer; every region is measured as a range (replay_mode range). Refused, as
// they would change or add to what decides: metrics other than the backend's duration, energy
// metrics, derive_metric, combine_kernel_metrics, ignore_kernel_list, normalize_against, adaptive
// sampling, info_collectors, work (profile the winner with them). A failing body stops the race with
// the SweepError of its round, whose partial results hold every round's runs so far.
Race tune(const Sweep& sweep, const Settings& settings, const Body& body, const RaceOptions& options = {});
// The same on a backend supplied by the caller: kscope::testing::SimulatedBackend for tests.
Race tune_with_backend(const Sweep& sweep, const Settings& settings, const Body& body, const RaceOptions& options,
                       MeasurementBackend& backend);

}  // namespace kscope

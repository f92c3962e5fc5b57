#pragma once
// The decisions of a race (kscope/tune.hpp), from durations alone: which configs each round visits,
// which are eliminated after it, and the final round's verdicts. Deterministic: the same samples give
// the same decisions, so a resumed race takes its first decisions again from the samples on disk.
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "core/files/output_formats.hpp"
#include "kscope/tune.hpp"

namespace kscope::detail {

// What a round measures: the raced configs it visits (indices into the race's configs), in order, and
// how many recorded runs each visit takes. The final round visits every finalist once per pass.
struct RoundPlan {
  std::string kind;  // "screening", "racing", "final"
  std::vector<std::size_t> visits;
  std::size_t runs = 0;
  std::size_t passes = 1;  // the final round's passes; 1 otherwise
};

// One recorded run: its duration and the SM clock observed around it (NaN: unknown).
struct RunSample {
  double duration = 0;
  double sm_clock_mhz = 0;
};

class Racer {
 public:
  // `names`: the raced configs, as reasons name them ("n=1024"); `max_runs`: Settings::runs, the most
  // a config gets before the final round. The options must have passed RaceOptions::validate.
  Racer(std::vector<std::string> names, const RaceOptions& options, std::size_t max_runs);

  // The round to measure next; nullopt once the race is decided.
  std::optional<RoundPlan> next_round() const;
  // The samples of the round just planned, per visit (in the plan's order), then its decisions.
  void record_round(const RoundPlan& plan, const std::vector<std::vector<RunSample>>& visits);

  // Once decided: every raced config's outcome (config_index is the raced config's position).
  std::vector<RaceRow> rows() const;
  const std::vector<RaceRound>& rounds() const { return rounds_; }

  // The level of each elimination test, and how many looks the race may take (for messages and tests).
  double elimination_level() const { return elimination_level_; }
  std::size_t looks() const { return looks_; }

 private:
  struct Config {
    std::vector<RunSample> samples;  // before the final round
    std::vector<RunSample> final;    // per pass
    std::optional<RaceOutcome> outcome;
    std::size_t round = 0;
    std::string reason;
    double ratio = NAN, ratio_lower = NAN, ratio_upper = NAN;
  };
  std::vector<std::size_t> alive() const;
  // Each alive config's median duration (+infinity without a valid one), by config; NaN for the others.
  std::vector<double> medians() const;
  // The alive config with the lowest of these medians (the first of equals).
  std::size_t leader(const std::vector<double>& medians) const;
  // The alive configs that run the final round: at most max_finalists, the lowest medians first.
  std::vector<std::size_t> finalists() const;
  // What a racing round measures: the leader (the lowest median) and the survivors whose median lies
  // beyond it by more than the threshold, which more runs can show slower. The others are the
  // leader's near-ties, which wait for the final round.
  std::vector<std::size_t> contested() const;
  // Drops the alive configs shown slower than the leader; returns how many.
  std::size_t eliminate();
  void judge_final(const std::vector<std::size_t>& finalists);

  std::vector<std::string> names_;
  RaceOptions options_;
  std::size_t max_runs_;
  std::size_t looks_;
  double elimination_level_;
  std::vector<Config> configs_;
  std::vector<RaceRound> rounds_;
  bool decided_ = false;
};

}  // namespace kscope::detail

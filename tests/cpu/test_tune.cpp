// kscope::tune: the race's decisions from known samples (core/decisions/race.hpp), and whole races on the
// simulated backend with noise against the known truth: winner, ties, eliminations, cost, clocks,
// resume, shards and the refusals.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "core/decisions/race.hpp"
#include "kscope/annotation.hpp"
#include "kscope/errors.hpp"
#include "kscope/metrics.hpp"
#include "kscope/testing.hpp"
#include "kscope/tune.hpp"
#include "test_support.hpp"

using namespace kscope;
using detail::Racer;
using detail::RoundPlan;
using detail::RunSample;
using kscope::testing::SimulatedBackend;
using kscope::testing::SimulatedNoise;
using kscope_test::error_of;
using kscope_test::TempDir;

namespace {

// n samples around `center`, spread +-1% in a fixed order, at one clock.
std::vector<RunSample> around(double center, std::size_t n, double clock = 1980) {
  std::vector<RunSample> out;
  for (std::size_t i = 0; i < n; ++i)
    out.push_back({center * (0.99 + 0.02 * static_cast<double>((i * 7) % n) / static_cast<double>(n)), clock});
  return out;
}

std::vector<std::string> names(std::size_t n) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < n; ++i) out.push_back("i=" + std::to_string(i));
  return out;
}

// Plays a race whose config c takes `center[c]` (its final passes too), until it is decided.
std::vector<RaceRow> play(Racer& racer, const std::vector<double>& center, std::vector<RoundPlan>* plans = nullptr) {
  while (const auto plan = racer.next_round()) {
    std::vector<std::vector<RunSample>> visits;
    for (std::size_t v = 0; v < plan->visits.size(); ++v) {
      const std::size_t pass = plan->kind == "final" ? v / (plan->visits.size() / plan->passes) : 0;
      auto samples = around(center[plan->visits[v]], plan->runs + pass + 3);
      samples.resize(plan->runs);
      visits.push_back(samples);
    }
    if (plans) plans->push_back(*plan);
    racer.record_round(*plan, visits);
  }
  return racer.rows();
}

RaceOutcome outcome(const std::vector<RaceRow>& rows, std::size_t c) { return rows.at(c).outcome; }

}  // namespace

TEST(Racer, ScreensEveryConfigThenDropsTheClearlySlowerAndRacesTheRestToAFinal) {
  // 12 configs: 0 is best, 1 ties it (+0.5%), 2 is 2.5% slower (too close to the 2% margin for 10
  // runs to show it, not for the final's paired passes), the others 60% and more.
  std::vector<double> center{100, 100.5, 102.5};
  for (int i = 3; i < 12; ++i) center.push_back(130 + 10 * i);
  RaceOptions options;
  options.max_finalists = 3;
  Racer racer(names(center.size()), options, 100);
  std::vector<RoundPlan> plans;
  const auto rows = play(racer, center, &plans);
  ASSERT_GE(plans.size(), 2u);
  EXPECT_EQ(plans.front().kind, "screening");
  EXPECT_EQ(plans.front().visits.size(), 12u);
  EXPECT_EQ(plans.front().runs, 10u);
  EXPECT_EQ(plans.back().kind, "final");
  EXPECT_EQ(outcome(rows, 0), RaceOutcome::winner);
  EXPECT_EQ(outcome(rows, 1), RaceOutcome::tied) << rows[1].reason;
  EXPECT_EQ(outcome(rows, 2), RaceOutcome::slower) << rows[2].reason;
  for (std::size_t c = 3; c < 12; ++c) {
    EXPECT_EQ(outcome(rows, c), RaceOutcome::eliminated) << c;
    EXPECT_EQ(rows[c].round, 1u) << rows[c].reason;  // after the screening round
    EXPECT_NE(rows[c].reason.find("slower than the leader (i=0) by more than 2%"), std::string::npos) << rows[c].reason;
  }
  EXPECT_NEAR(rows[1].ratio, 1.005, 0.004);
  EXPECT_LE(rows[1].ratio_ci_lower, 1.02);
  EXPECT_GT(rows[2].ratio_ci_lower, 1.02);
  EXPECT_EQ(rows[0].runs, 10u + options.final_runs);
}

TEST(Racer, TheFinalPassesVisitEveryFinalistOnceInARotatingOrder) {
  RaceOptions options;
  options.final_runs = 4;
  Racer racer(names(3), options, 100);
  racer.record_round(*racer.next_round(), {around(100, 10), around(100.2, 10), around(100.4, 10)});
  const auto final = racer.next_round();
  ASSERT_TRUE(final);
  EXPECT_EQ(final->kind, "final");
  EXPECT_EQ(final->passes, 4u);
  EXPECT_EQ(final->visits, (std::vector<std::size_t>{0, 1, 2, 1, 2, 0, 2, 0, 1, 0, 1, 2}));
}

TEST(Racer, TheEliminationLevelIsBonferroniOverEveryTestThatCouldDropTheBest) {
  RaceOptions options;  // alpha 0.05, first_runs 10
  // Looks at 10, 20, 40, 80, 100 runs: 5; 64 configs: 63 rivals of the best at each look.
  const Racer racer(names(64), options, 100);
  EXPECT_EQ(racer.looks(), 5u);
  EXPECT_DOUBLE_EQ(racer.elimination_level(), 0.05 / 2 / (63 * 5));
  EXPECT_EQ(Racer(names(64), options, 10).looks(), 1u);
}

TEST(Racer, RacingRoundsDoubleTheSurvivorsRunsUpToTheMostAndLeaveOutTheRestOfATie) {
  // Ten identical configs: nothing can be eliminated; the runs double to 40, then the final takes
  // max_finalists of them and leaves the others out.
  RaceOptions options;
  options.max_finalists = 4;
  Racer racer(names(10), options, 40);
  std::vector<RoundPlan> plans;
  const auto rows = play(racer, std::vector<double>(10, 100), &plans);
  ASSERT_EQ(plans.size(), 4u);
  EXPECT_EQ(plans[1].kind, "racing");
  EXPECT_EQ(plans[1].runs, 10u);  // 10 -> 20
  EXPECT_EQ(plans[2].runs, 20u);  // 20 -> 40
  EXPECT_EQ(plans[3].kind, "final");
  const auto count = [&](RaceOutcome o) {
    return std::count_if(rows.begin(), rows.end(), [&](const RaceRow& r) { return r.outcome == o; });
  };
  EXPECT_EQ(count(RaceOutcome::winner), 1);
  EXPECT_EQ(count(RaceOutcome::tied), 3);
  EXPECT_EQ(count(RaceOutcome::left_out), 6);
  EXPECT_EQ(count(RaceOutcome::eliminated), 0);
}

TEST(Racer, AConfigSlowerInTimeOnlyBecauseItsClockDroppedIsNotEliminated) {
  // Config 1 ran at 1755 MHz instead of 1980: 12.8% longer, the same cycles. Config 2 is 13% slower
  // in cycles too, half of its runs at the low clock.
  std::vector<RunSample> slowed, truly_slower;
  for (RunSample s : around(100, 10)) slowed.push_back({s.duration * 1980 / 1755, 1755});
  for (RunSample s : around(113, 10))
    truly_slower.push_back(truly_slower.size() % 2 ? RunSample{s.duration * 1980 / 1755, 1755} : s);
  Racer racer(names(3), {}, 100);
  racer.record_round(*racer.next_round(), {around(100, 10), slowed, truly_slower});
  const auto rows = play(racer, {100, 100, 113});
  EXPECT_NE(outcome(rows, 1), RaceOutcome::eliminated) << rows[1].reason;
  EXPECT_EQ(outcome(rows, 2), RaceOutcome::eliminated) << rows[2].reason;
  EXPECT_NE(rows[2].reason.find("in cycles p = "), std::string::npos) << rows[2].reason;
}

TEST(Racer, OneConfigIsTheWinnerWithoutARace) {
  Racer racer(names(1), {}, 100);
  EXPECT_FALSE(racer.next_round());
  EXPECT_EQ(racer.rows().at(0).outcome, RaceOutcome::winner);
}

TEST(Racer, TheSameSamplesGiveTheSameDecisions) {
  std::vector<double> center;
  std::mt19937_64 rng(3);
  for (int i = 0; i < 20; ++i) center.push_back(100 + std::uniform_real_distribution<double>(0, 10)(rng));
  Racer a(names(20), {}, 100), b(names(20), {}, 100);
  const auto ra = play(a, center), rb = play(b, center);
  for (std::size_t c = 0; c < 20; ++c) {
    EXPECT_EQ(ra[c].outcome, rb[c].outcome);
    EXPECT_EQ(ra[c].reason, rb[c].reason);
  }
}

// ---- Whole races on the simulated backend ---------------------------------------------------------

namespace {

Sweep sweep_of(std::size_t configs) {
  std::vector<Value> i;
  for (std::size_t c = 0; c < configs; ++c) i.push_back(static_cast<std::int64_t>(c));
  return Sweep().axis("i", i);
}

Settings race_settings(std::size_t runs = 60) {
  Settings s = kscope_test::quiet(runs);
  return s;
}

// Config i launches kernel "k<i>" of base[i] ns; counts its calls per config.
struct Space {
  std::vector<double> base;
  std::map<std::int64_t, std::size_t> calls;
  Body body(SimulatedBackend& sim) {
    return [this, &sim](const Config& c) {
      const auto i = c.get<std::int64_t>("i");
      ++calls[i];
      Annotation a("k");
      sim.launch(std::string("k").append(std::to_string(i)), base[static_cast<std::size_t>(i)]);
    };
  }
};

SimulatedNoise noisy(std::uint64_t seed) {
  SimulatedNoise n;
  n.seed = seed;
  n.kernel = {1.5, 0.01, 1.5, 0.8};
  n.clock_drops_per_s = 5;
  n.clock_drop_s = 0.005;
  return n;
}

}  // namespace

TEST(Tune, FindsTheFastestOfANoisySpaceInAFractionOfTheExhaustiveRuns) {
  Space space{{70000, 52000, 90000, 50000, 50400, 65000, 120000, 80000, 51000, 99000, 75000, 140000}, {}};
  SimulatedBackend sim;
  sim.set_noise(noisy(11));
  const Race race = tune_with_backend(sweep_of(space.base.size()), race_settings(), space.body(sim), {}, sim);
  // 3 is the fastest; 4 (+0.8%) can tie it; 8 (+2%) and 1 (+4%) may reach the final.
  EXPECT_TRUE(race.winner() == 3 || race.winner() == 4) << race;
  for (std::size_t c : {0, 2, 5, 6, 7, 9, 10, 11})
    EXPECT_EQ(race.rows().at(c).outcome, RaceOutcome::eliminated) << race;
  EXPECT_EQ(race.cost().exhaustive_runs, 12u * 61);
  EXPECT_LT(race.cost().runs, race.cost().exhaustive_runs / 2) << race;
  EXPECT_LT(race.cost().gpu_s, race.cost().exhaustive_gpu_s);
  EXPECT_DOUBLE_EQ(race.confidence(), 0.95);
  // Every recorded run is in the measurements, by the sweep's configs.
  std::size_t samples = 0;
  for (const RaceRow& r : race.rows()) samples += r.runs;
  EXPECT_EQ(race.measurements().samples().size(), samples);
  EXPECT_EQ(race.measurements().configs().size(), 12u);
  std::size_t calls = 0;
  for (const auto& [i, n] : space.calls) calls += n;
  EXPECT_EQ(calls, race.cost().runs);  // warm-ups included
  const Table t = race.table();
  EXPECT_EQ(t.columns.front(), "i");
  EXPECT_EQ(t.columns.at(1), "Outcome");
  std::ostringstream shown;
  shown << race;
  EXPECT_NE(shown.str().find("winner: i="), std::string::npos) << shown.str();
  EXPECT_NE(shown.str().find("round 1 (screening): 12 configs, 10 runs each"), std::string::npos) << shown.str();
}

TEST(Tune, AResumedRaceTakesTheSameDecisionsAndMeasuresOnlyWhatIsMissing) {
  TempDir dir;
  const std::vector<double> base{50000, 50300, 61000, 70000, 90000, 52000};
  const auto run = [&](Settings s, Space& space, SimulatedBackend& sim) {
    return tune_with_backend(sweep_of(base.size()), s, space.body(sim), {}, sim);
  };
  // Without noise, the durations a resumed race measures are those the uninterrupted one measured.
  Settings s = race_settings();
  s.output_prefix = dir.prefix("race_");
  Space whole{base, {}};
  SimulatedBackend sim_whole;
  Settings elsewhere = s;
  elsewhere.output_prefix = dir.prefix("whole_");
  const Race uninterrupted = run(elsewhere, whole, sim_whole);

  // The same race failing in its final round, then resumed.
  Space failing{base, {}};
  SimulatedBackend sim;
  std::size_t calls = 0;
  const std::size_t fail_at = uninterrupted.cost().runs - 5;
  const Body body = failing.body(sim);
  const Body breaking = [&](const Config& c) {
    if (++calls == fail_at) throw std::runtime_error("a crash");
    body(c);
  };
  const std::string error = error_of<SweepError>([&] { tune_with_backend(sweep_of(base.size()), s, breaking, {}, sim); });
  EXPECT_EQ(error.rfind("race round", 0), 0u) << error;
  EXPECT_TRUE(std::filesystem::exists(s.output_prefix + "round-1-samples.csv"));
  const std::string unasked = error_of([&] { run(s, failing, sim); });
  EXPECT_NE(unasked.find("' holds an unfinished race (2 rounds started: killed, interrupted or failed)"),
            std::string::npos)
      << unasked;
  EXPECT_NE(unasked.find("Set Settings::resume = true to continue it (the runs on disk take the same decisions "
                         "again), Settings::overwrite = true to replace it, or give another Settings::output_prefix"),
            std::string::npos)
      << unasked;
  s.resume = true;
  Space resumed{base, {}};
  SimulatedBackend sim_again;
  const Race race = run(s, resumed, sim_again);
  for (std::size_t c = 0; c < base.size(); ++c) {
    EXPECT_EQ(race.rows()[c].outcome, uninterrupted.rows()[c].outcome) << race << uninterrupted;
    EXPECT_EQ(race.rows()[c].runs, uninterrupted.rows()[c].runs);
  }
  std::size_t measured_again = 0;
  for (const auto& [i, n] : resumed.calls) measured_again += n;
  EXPECT_LT(measured_again, 20u);  // the final round's visits from the failed one on
  EXPECT_TRUE(std::filesystem::exists(s.output_prefix + "race.csv"));
  EXPECT_TRUE(std::filesystem::exists(s.output_prefix + "results.json"));
  const Results loaded = load_results(s.output_prefix + "results.json");
  EXPECT_EQ(loaded.samples().size(), race.measurements().samples().size());
}

TEST(Tune, AShardWithNothingToRaceHasNoWinner) {
  SimulatedBackend sim;
  Space space{{50000, 60000}, {}};
  Settings s = race_settings();
  s.shard = Shard{2, 3};
  const Race race = tune_with_backend(sweep_of(2), s, space.body(sim), {}, sim);
  EXPECT_TRUE(race.rows().empty());
  EXPECT_EQ(race.cost().runs, 0u);
  EXPECT_EQ(error_of([&] { race.winner(); }), "this race has no winner: it raced no config (a shard with nothing to measure)");
}

TEST(Tune, AShardRacesItsOwnConfigsOnly) {
  TempDir dir;
  Space space{{50000, 60000, 51000, 70000, 52000, 80000}, {}};
  SimulatedBackend sim;
  Settings s = race_settings();
  s.shard = Shard{1, 2};
  s.output_prefix = dir.prefix("race_");
  const Race race = tune_with_backend(sweep_of(6), s, space.body(sim), {}, sim);
  ASSERT_EQ(race.rows().size(), 3u);
  for (const RaceRow& r : race.rows()) EXPECT_EQ(r.config_index % 2, 1u);
  EXPECT_EQ(race.winner(), 1u);
  EXPECT_EQ(race.cost().exhaustive_runs, 3u * 61);
  EXPECT_EQ(space.calls.count(0), 0u);
  EXPECT_TRUE(std::filesystem::exists(s.output_prefix + "shard-1-of-2-race.csv"));
  EXPECT_TRUE(std::filesystem::exists(s.output_prefix + "shard-1-of-2-round-1-samples.csv"));
}

TEST(Tune, RefusesWhatWouldChangeOrAddToWhatDecides) {
  SimulatedBackend sim;
  Space space{{1, 2}, {}};
  const auto refusal = [&](Settings s, RaceOptions o = {}) {
    return error_of([&] { tune_with_backend(sweep_of(2), s, space.body(sim), o, sim); });
  };
  Settings s = race_settings();
  s.metrics = {"sm__throughput.avg.pct_of_peak_sustained_elapsed"};
  EXPECT_EQ(refusal(s).rfind("tune does not take Settings::metrics: the race decides by the duration its backend", 0),
            0u) << refusal(s);
  s.metrics = {kscope::kCuptiKernelDuration};  // the backend's own: chosen with Settings::backend instead
  EXPECT_EQ(refusal(s).rfind("tune does not take Settings::metrics", 0), 0u) << refusal(s);
  s = race_settings();
  s.derive_metric = [](const MeasuredValues&, const Config&) { return std::vector<DerivedValue>{}; };
  EXPECT_EQ(refusal(s).rfind("tune does not take Settings::derive_metric", 0), 0u);
  s = race_settings();
  s.sampling = Sampling::adaptive;
  EXPECT_EQ(refusal(s), "tune does not take Settings::sampling: adaptive sampling: the race decides how many runs each "
                        "config gets");
  s = race_settings();
  s.throttled_runs = ThrottledRuns::exclude;
  EXPECT_EQ(refusal(s).rfind("tune does not take Settings::throttled_runs: the race judges every run", 0), 0u);
  s = race_settings();
  s.ncu_sections = {"SpeedOfLight"};
  EXPECT_EQ(refusal(s).rfind("tune does not take Settings::ncu_sections", 0), 0u);
  s = race_settings(5);
  EXPECT_EQ(refusal(s), "RaceOptions::first_runs (10) is more than Settings::runs (5), the most runs a config gets "
                        "before the final round: raise Settings::runs (100, say) or lower RaceOptions::first_runs");
  RaceOptions o;
  o.alpha = 1.5;
  EXPECT_EQ(refusal(race_settings(), o), "RaceOptions::alpha is 1.5: it takes a probability between 0 and 1 (0.05 by default)");
  o = {};
  o.first_runs = 1;
  EXPECT_EQ(refusal(race_settings(), o).rfind("RaceOptions::first_runs is 1: it takes a count of at least 2", 0), 0u);
  o = {};
  o.annotation = "other";
  EXPECT_EQ(refusal(race_settings(), o),
            "RaceOptions::annotation names 'other', which the body did not open (it opened 'k'): name the "
            "annotation whose duration decides the race");
}

TEST(Tune, ABodyWithSeveralAnnotationsMustNameTheOneThatDecides) {
  SimulatedBackend sim;
  std::size_t calls = 0;
  const Body body = [&](const Config& c) {
    ++calls;
    {
      Annotation a("setup");
      sim.launch("fill", 10);
    }
    Annotation b("matmul");
    sim.launch(std::string("k").append(std::to_string(c.index())), 1000.0 * static_cast<double>(c.index() + 1));
  };
  const std::string error = error_of([&] { tune_with_backend(sweep_of(4), race_settings(), body, {}, sim); });
  EXPECT_EQ(error, "the body opened 2 annotations ('matmul', 'setup'): name the one whose duration decides the race "
                   "with RaceOptions::annotation");
  EXPECT_EQ(calls, 1u);  // refused at the first run, not after a round
  RaceOptions o;
  o.annotation = "matmul";
  EXPECT_EQ(tune_with_backend(sweep_of(4), race_settings(), body, o, sim).winner(), 0u);
}

TEST(Tune, AnEarlierRaceIsMovedAsideOrReplacedWithOverwrite) {
  TempDir dir;
  SimulatedBackend sim;
  Space space{{50000, 90000}, {}};
  Settings s = race_settings();
  s.output_prefix = dir.prefix("race_");
  tune_with_backend(sweep_of(2), s, space.body(sim), {}, sim);
  const std::string first = kscope_test::text_of(s.output_prefix + "race.csv");
  EXPECT_EQ(tune_with_backend(sweep_of(2), s, space.body(sim), {}, sim).winner(), 0u);  // the first moved aside
  EXPECT_EQ(kscope_test::text_of(s.output_prefix + "race.csv.~1~"), first);
  EXPECT_TRUE(std::filesystem::exists(s.output_prefix + "round-1-samples.csv.~1~"));
  s.overwrite = true;
  EXPECT_EQ(tune_with_backend(sweep_of(2), s, space.body(sim), {}, sim).winner(), 0u);
  EXPECT_FALSE(std::filesystem::exists(s.output_prefix + "race.csv.~2~"));
}

// The recipe "How to add a stopping rule" (docs/architecture.md), walked with a toy rule the test
// registers itself: a name and a function stop an adaptive sweep on the simulated backend, and the
// results file writes the rule's name and reads it back. kscope's own rules keep their names.
#include <gtest/gtest.h>

#include <cmath>
#include <sstream>
#include <string>

#include "kscope/annotation.hpp"
#include "kscope/profile.hpp"
#include "kscope/results.hpp"
#include "kscope/statistics.hpp"
#include "kscope/stopping_rule.hpp"
#include "kscope/testing.hpp"
#include "test_support.hpp"

using namespace kscope;
using kscope::testing::SimulatedBackend;
using kscope_test::error_of;
using kscope_test::in_child;

namespace {

// An adaptive sweep of one config whose kernel always lasts 5 us, stopped by `criterion`.
Results constant_kernel_sweep(StopCriterion criterion) {
  SimulatedBackend backend;
  Settings s = kscope_test::quiet();
  s.sampling = Sampling::adaptive;
  s.adaptive.criterion = criterion;
  return profile_with_backend(Sweep(), s, [&](const Config&) {
    Annotation a("k");
    backend.launch("k", 5000);
  }, backend);
}

std::string results_file(const Results& results) {
  std::stringstream file;
  results.write_json(file);
  return file.str();
}

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

TEST(StoppingRules, KscopesOwnRulesKeepTheirNames) {
  ASSERT_GE(registered_stopping_rules().size(), 2u);
  EXPECT_EQ(registered_stopping_rules()[0], StopCriterion::ci_halfwidth);
  EXPECT_EQ(registered_stopping_rules()[1], StopCriterion::rsd);
  EXPECT_EQ(StopCriterion::named("rsd"), StopCriterion::rsd);
  EXPECT_EQ(StopCriterion(), StopCriterion::ci_halfwidth);
  // Samples spread by 10% about a mean of 100: the CI's half-width narrows with n, the RSD does not.
  const SampleStatistics stats = summarize(std::vector<double>{90, 110, 90, 110}, 1);
  EXPECT_NEAR(stopping_rule(StopCriterion::rsd).spread_pct(stats), stats.rsd_pct, 1e-12);
  EXPECT_NEAR(stopping_rule(StopCriterion::ci_halfwidth).spread_pct(stats), stats.ci95_upper - 100, 1e-9);
  EXPECT_TRUE(has(results_file(constant_kernel_sweep(StopCriterion::rsd)), "\"criterion\": \"rsd\""));
}

TEST(StoppingRules, AToyRuleStopsAnAdaptiveSweepAndItsNameIsSaved) {
  const std::string problems = in_child([] {
    std::string found;
    const auto expect = [&](bool holds, const std::string& what) {
      if (!holds) found += what + "\n";
    };
    // Not known before 25 samples (NaN), met from then on: the sweep stops at exactly 25 runs.
    const StopCriterion toy = register_stopping_rule(
        {"twenty_five_runs", [](const SampleStatistics& stats) { return stats.count < 25 ? NAN : 0.0; }});
    expect(toy == StopCriterion::named("twenty_five_runs"), "the rule is found by its name");
    expect(registered_stopping_rules().back() == toy, "the rule is listed after kscope's own");

    const Results by_default = constant_kernel_sweep(StopCriterion::ci_halfwidth);
    expect(by_default.rows()[0].stats.count == 10, "kscope's default rule stops a constant kernel at min_runs");
    const Results results = constant_kernel_sweep(toy);
    expect(results.rows()[0].converged == std::optional<bool>(true), "the toy rule's sweep converged");
    expect(results.rows()[0].stats.count == 25,
           "the toy rule stops at 25 runs, not " + std::to_string(results.rows()[0].stats.count));

    const std::string file = results_file(results);
    expect(has(file, "\"criterion\": \"twenty_five_runs\""), "the results file names the rule");
    std::stringstream in(file);
    expect(load_results(in, "results.json").settings().adaptive.criterion == toy, "the results file reads it back");

    std::string renamed = file;
    renamed.replace(renamed.find("twenty_five_runs"), 16, "twenty_six_runs");
    std::stringstream unknown(renamed);
    const std::string refusal = error_of([&] { load_results(unknown, "results.json"); });
    expect(has(refusal, "must be \"ci_halfwidth\" or \"rsd\" or \"twenty_five_runs\", not \"twenty_six_runs\""),
           "a file naming an unregistered rule is refused with the registered ones: " + refusal);
    return found;
  });
  EXPECT_EQ(problems, "");
}

TEST(StoppingRules, ABadRuleOrNameIsRefusedWithTheReason) {
  const auto spread = [](const SampleStatistics& stats) { return stats.rsd_pct; };
  EXPECT_TRUE(has(error_of([&] { register_stopping_rule({"", spread}); }), "a stopping rule needs a name and a function"));
  EXPECT_TRUE(has(error_of([] { register_stopping_rule({"nothing", {}}); }), "a stopping rule needs a name and a function"));
  EXPECT_TRUE(has(error_of([&] { register_stopping_rule({"rsd", spread}); }),
                  "a stopping rule named 'rsd' is registered already; choose another name"));
  EXPECT_TRUE(has(error_of([] { StopCriterion::named("noise"); }),
                  "no stopping rule is named 'noise': the registered ones are 'ci_halfwidth', 'rsd'"));
}

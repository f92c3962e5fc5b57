// kscope::evaluate on the simulated backend: verdicts on honest candidates, each finding on the
// attack it stops, the statistics, the checks of outputs and inputs, and the evaluation's file.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <functional>
#include <iterator>
#include <limits>
#include <map>
#include <memory>
#include <random>
#include <sstream>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/decisions/checks_by_memory.hpp"
#include "core/decisions/evaluation_report.hpp"
#include "core/decisions/host_tensor_checks.hpp"
#include "core/model/tensor_elements.hpp"
#include "kscope/evaluate.hpp"
#include "kscope/testing.hpp"
#include "test_support.hpp"

namespace {

using kscope::EvaluationVerdict;
using kscope::Finding;
using kscope::Tensors;
using kscope::TensorView;
using kscope::testing::SimulatedBackend;

using Buffer = std::vector<float>;

std::string csv_of(const kscope::Table& table) {
  std::ostringstream out;
  kscope::write_csv(table, out);
  return out.str();
}

// A host buffer as Tensors that keep it alive.
Tensors tensors_of(std::shared_ptr<Buffer> buffer) {
  TensorView v{buffer->data(), {static_cast<std::int64_t>(buffer->size())}, kscope::DType::f32,
               kscope::MemorySpace::host};
  return Tensors{{v}, buffer};
}

Buffer& buffer_of(const Tensors& t) {
  return *const_cast<Buffer*>(static_cast<const Buffer*>(t.owner.get()));
}

// Fresh values from the seed: the same seed gives the same values.
Tensors random_inputs(std::size_t n, std::uint64_t seed) {
  auto buffer = std::make_shared<Buffer>(n);
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal;
  for (float& x : *buffer) x = normal(rng);
  return tensors_of(buffer);
}

// y = 2x, as a simulated kernel of `ns` on the host.
Tensors doubled(const Tensors& in, SimulatedBackend& sim, const char* kernel, double ns) {
  sim.launch(kernel, ns);
  auto out = std::make_shared<Buffer>(buffer_of(in));
  for (float& x : *out) x *= 2;
  return tensors_of(out);
}

struct Fixture {
  SimulatedBackend sim;
  kscope::Settings settings = kscope_test::quiet(20);
  kscope::Sweep sweep = kscope::Sweep().axis("n", {std::int64_t{64}});
  kscope::Contest contest;
  kscope::EvaluateOptions options;

  Fixture() {
    contest.inputs = [](const kscope::Config& c, std::uint64_t seed) {
      return random_inputs(static_cast<std::size_t>(c.get<std::int64_t>("n")), seed);
    };
    contest.reference = [this](const Tensors& in) { return doubled(in, sim, "reference_kernel", 1000); };
    contest.candidate = [this](const Tensors& in) { return doubled(in, sim, "candidate_kernel", 500); };
  }
  kscope::Evaluation run() { return kscope::evaluate_with_backend(sweep, settings, contest, options, sim); }
};

bool has(const kscope::EvaluationRow& row, Finding f) {
  return std::find(row.findings.begin(), row.findings.end(), f) != row.findings.end();
}

std::string findings_text(const kscope::Evaluation& e) {
  std::string out;
  for (const auto& f : e.findings()) out += to_string(f.finding) + " (" + to_string(f.side) + "): " + f.detail + "\n";
  return out;
}

TEST(Evaluate, HonestFasterCandidateIsFasterWithItsSpeedupAndNoFinding) {
  Fixture f;
  const kscope::Evaluation e = f.run();
  ASSERT_EQ(e.rows().size(), 1u);
  const kscope::EvaluationRow& row = e.rows()[0];
  EXPECT_EQ(row.verdict, EvaluationVerdict::faster) << row.reason;
  EXPECT_TRUE(row.correct);
  EXPECT_TRUE(row.findings.empty()) << findings_text(e);
  EXPECT_DOUBLE_EQ(row.speedup, 2.0);
  EXPECT_DOUBLE_EQ(row.reference_median_ns, 1000);
  EXPECT_DOUBLE_EQ(row.candidate_median_ns, 500);
  EXPECT_EQ(row.runs, 20u);
  // The warm-up and 8 of the 20 recorded runs (EvaluateOptions::checked_runs' default).
  EXPECT_EQ(row.checked_runs, 9u);
  EXPECT_EQ(row.max_abs_error, 0);
  // Every run is a pair: one candidate and one reference region, the candidate's first.
  EXPECT_EQ(e.measurements().samples().size(), 40u);
  EXPECT_EQ(e.measurements().samples()[0].annotation, "candidate");
  EXPECT_EQ(e.measurements().samples()[1].annotation, "reference");
}

TEST(Evaluate, CheckedRunsZeroOrAtLeastTheRunsReadsEveryRun) {
  for (const std::size_t checked : {std::size_t{0}, std::size_t{20}, std::size_t{100}}) {
    Fixture f;
    f.options.checked_runs = checked;
    EXPECT_EQ(f.run().rows()[0].checked_runs, 21u) << "checked_runs " << checked;
  }
}

// A candidate that adds 1 to element 0 of its output in the calls `wrong` picks (call 0: the warm-up):
// how many of `evaluations` evaluations found it incorrect.
std::size_t caught(std::size_t evaluations, std::size_t runs, std::size_t checked,
                   const std::function<bool(std::size_t call)>& wrong) {
  std::size_t incorrect = 0;
  for (std::size_t e = 0; e < evaluations; ++e) {
    Fixture f;
    f.settings.runs = runs;
    f.options.checked_runs = checked;
    std::size_t call = 0;
    f.contest.candidate = [&](const Tensors& in) {
      Tensors out = doubled(in, f.sim, "candidate_kernel", 500);
      if (wrong(call++)) buffer_of(out)[0] += 1.0f;
      return out;
    };
    incorrect += f.run().rows()[0].verdict == EvaluationVerdict::incorrect;
  }
  return incorrect;
}

TEST(Evaluate, AWrongAnswerOnOneRecordedRunIsCaughtAsOftenAsTheShareOfRunsChecked) {
  // 8 of 20 runs read: caught with probability 0.4, so 80 of 200 expected (sd 6.9); the bounds lie
  // 5.8 sd away, and a subset that were not random (always or never that run) falls outside them.
  const std::size_t found = caught(200, 20, 8, [](std::size_t call) { return call == 7; });
  EXPECT_GT(found, 40u);
  EXPECT_LT(found, 120u);
}

TEST(Evaluate, AWrongAnswerOnHalfTheRunsEscapesAsOftenAsTheHypergeometricLawSays) {
  // Wrong on 5 of 10 recorded runs, 3 read: it escapes when all 3 fall on the 5 right runs,
  // C(5,3)/C(10,3) = 1/12, so 20 of 240 escapes expected; the bounds are beyond 4.5 sd (Poisson tails).
  const std::size_t escaped = 240 - caught(240, 10, 3, [](std::size_t call) { return call > 0 && call % 2 == 0; });
  EXPECT_GT(escaped, 2u);
  EXPECT_LT(escaped, 45u);
}

TEST(Evaluate, TheWarmUpRunsAreAlwaysRead) {
  EXPECT_EQ(caught(20, 20, 1, [](std::size_t call) { return call == 0; }), 20u);
}

TEST(Evaluate, RunsNotReadStillFindWhatNeedsNoReading) {
  Fixture f;
  f.options.checked_runs = 1;
  f.contest.candidate = [&](const Tensors& in) {
    f.sim.launch("candidate_kernel", 500);
    return in;  // its input as its output: wrong, and aliasing, which needs no reading
  };
  const kscope::Evaluation e = f.run();
  EXPECT_EQ(e.rows()[0].checked_runs, 2u);
  EXPECT_EQ(e.rows()[0].mismatched_runs, 2u);
  for (const kscope::FindingRecord& found : e.findings())
    if (found.finding == Finding::output_aliases_input) EXPECT_EQ(found.runs, 21u) << findings_text(e);
  EXPECT_TRUE(has(e.rows()[0], Finding::output_aliases_input)) << findings_text(e);
}

TEST(Evaluate, NoGpuWorkOnEitherSideHasNoSpeedupRatherThanAnInfiniteOne) {
  Fixture f;
  const auto on_the_host = [](const Tensors& in) {
    auto out = std::make_shared<Buffer>(buffer_of(in));
    for (float& x : *out) x *= 2;
    return tensors_of(out);
  };
  f.contest.candidate = on_the_host;
  f.contest.reference = on_the_host;
  const kscope::EvaluationRow row = f.run().rows()[0];
  EXPECT_EQ(row.candidate_median_ns, 0);
  EXPECT_EQ(row.reference_median_ns, 0);
  EXPECT_TRUE(std::isnan(row.speedup)) << row.speedup;
  EXPECT_TRUE(std::isnan(row.speedup_ci_lower) && std::isnan(row.speedup_ci_upper));
  EXPECT_NE(row.verdict, EvaluationVerdict::faster) << row.reason;
}

TEST(Evaluate, SlowerAndSameCandidates) {
  Fixture slower;
  slower.contest.candidate = [&](const Tensors& in) { return doubled(in, slower.sim, "candidate_kernel", 1500); };
  EXPECT_EQ(slower.run().rows()[0].verdict, EvaluationVerdict::slower);

  Fixture same;
  same.contest.candidate = [&](const Tensors& in) { return doubled(in, same.sim, "candidate_kernel", 1010); };
  const kscope::EvaluationRow row = same.run().rows()[0];
  EXPECT_EQ(row.verdict, EvaluationVerdict::same);
  EXPECT_NE(row.reason.find("a tie"), std::string::npos) << row.reason;
}

TEST(Evaluate, TooFewRunsForAnIntervalShowNoDifference) {
  Fixture f;
  f.settings.runs = 5;  // the order statistics of 5 ratios reach 93.75% at most
  const kscope::EvaluationRow row = f.run().rows()[0];
  EXPECT_EQ(row.verdict, EvaluationVerdict::same);
  EXPECT_TRUE(std::isnan(row.speedup_ci_lower));
  EXPECT_NE(row.reason.find("at least 6 runs"), std::string::npos) << row.reason;
}

TEST(Evaluate, AWrongAnswerIsIncorrectWithTheElementAndTheSeedToMakeItAgain) {
  Fixture f;
  f.contest.candidate = [&](const Tensors& in) {
    Tensors out = doubled(in, f.sim, "candidate_kernel", 500);
    buffer_of(out)[3] += 1.0f;
    return out;
  };
  const kscope::EvaluationRow row = f.run().rows()[0];
  EXPECT_EQ(row.verdict, EvaluationVerdict::incorrect);
  EXPECT_FALSE(row.correct);
  EXPECT_EQ(row.mismatched_runs, 9u);  // every checked run
  ASSERT_TRUE(row.failing_seed.has_value());
  EXPECT_EQ(*row.failing_seed, kscope::seed_of(0, 0, 0));
  EXPECT_NE(row.mismatch.find("element 3"), std::string::npos) << row.mismatch;
  EXPECT_NEAR(row.max_abs_error, 1.0, 1e-6);
}

TEST(Evaluate, LowerPrecisionIsOutsideFloat32sDefaultTolerance) {
  Fixture f;
  f.contest.candidate = [&](const Tensors& in) {
    Tensors out = doubled(in, f.sim, "candidate_kernel", 500);
    for (float& x : buffer_of(out)) x = std::round(x * 1024.0f) / 1024.0f;  // about float16's precision near 1
    return out;
  };
  const kscope::EvaluationRow row = f.run().rows()[0];
  EXPECT_EQ(row.verdict, EvaluationVerdict::incorrect) << row.reason;
  EXPECT_GT(row.max_rel_error, kscope::default_rtol(kscope::DType::f32));
}

// Reference outputs whose scale a few elements would set: a mask's fill (the dtype's extreme, -inf or
// -1e9 in every fourth element), zeros of padding in three of four, and one element in sixteen a
// million times larger than the rest. The honest candidate computes the same; the wrong one computes
// the same special elements and 1.5 times every other one. A tolerance derived from the root mean
// square of such an output was ~1e34 (the audit's `faster`, Correct, MaxRelError 2.2e-38).
TEST(Evaluate, AMaskPaddingOrAFewLargeElementsNeverBlindTheTolerance) {
  struct Output {
    const char* what;
    bool (*special)(std::size_t i);
    float (*value)(float x);  // a special element's value, from the input
  };
  const Output outputs[] = {
      {"finfo(float32).min in every fourth element", [](std::size_t i) { return i % 4 == 0; },
       [](float) { return std::numeric_limits<float>::lowest(); }},
      {"-inf in every fourth element", [](std::size_t i) { return i % 4 == 0; },
       [](float) { return -std::numeric_limits<float>::infinity(); }},
      {"-1e9 in every fourth element", [](std::size_t i) { return i % 4 == 0; }, [](float) { return -1e9f; }},
      {"zeros of padding in three elements of four", [](std::size_t i) { return i % 4 != 0; },
       [](float) { return 0.0f; }},
      {"one element in sixteen a million times larger", [](std::size_t i) { return i % 16 == 0; },
       [](float x) { return 1e6f * x; }},
  };
  for (const Output& output : outputs) {
    SCOPED_TRACE(output.what);
    const auto computed = [&](const Tensors& in, SimulatedBackend& sim, const char* kernel, double ns, float factor) {
      Tensors out = doubled(in, sim, kernel, ns);
      std::vector<float>& y = buffer_of(out);
      const std::vector<float>& x = buffer_of(in);
      for (std::size_t i = 0; i < y.size(); ++i) y[i] = output.special(i) ? output.value(x[i]) : factor * y[i];
      return out;
    };
    Fixture honest;
    honest.contest.reference = [&](const Tensors& in) { return computed(in, honest.sim, "reference_kernel", 1000, 1); };
    honest.contest.candidate = [&](const Tensors& in) { return computed(in, honest.sim, "candidate_kernel", 500, 1); };
    const kscope::EvaluationRow right = honest.run().rows()[0];
    EXPECT_EQ(right.verdict, EvaluationVerdict::faster) << right.reason;

    Fixture wrong;
    wrong.contest.reference = [&](const Tensors& in) { return computed(in, wrong.sim, "reference_kernel", 1000, 1); };
    wrong.contest.candidate = [&](const Tensors& in) { return computed(in, wrong.sim, "candidate_kernel", 500, 1.5f); };
    const kscope::EvaluationRow row = wrong.run().rows()[0];
    EXPECT_EQ(row.verdict, EvaluationVerdict::incorrect) << row.reason;
    EXPECT_FALSE(row.correct);
    EXPECT_GT(row.max_rel_error, 0.3) << row.reason;
  }
}

// Outputs given names (a Python function's dict, or a C++ caller's) are paired by name, whatever
// their order; names one side lacks are named, as a different count is.
TEST(Evaluate, NamedOutputsArePairedByNameAndOtherNamesAreNamed) {
  const auto two_outputs = [](const Tensors& in, SimulatedBackend& sim, const char* kernel, double ns,
                              std::vector<std::string> names, float shift) {
    Tensors out = doubled(in, sim, kernel, ns);
    auto shifted = std::make_shared<Buffer>(buffer_of(in));
    for (float& x : *shifted) x += shift;
    out.views.push_back(tensors_of(shifted).views[0]);
    out.owner = std::make_shared<std::pair<std::shared_ptr<const void>, std::shared_ptr<Buffer>>>(out.owner, shifted);
    out.names = std::move(names);
    return out;
  };
  Fixture f;
  f.contest.reference = [&](const Tensors& in) {
    return two_outputs(in, f.sim, "reference_kernel", 1000, {"output['doubled']", "output['shifted']"}, 100);
  };
  std::vector<std::string> names;
  float shift = 100;
  f.contest.candidate = [&](const Tensors& in) {
    Tensors out = two_outputs(in, f.sim, "candidate_kernel", 500, names, shift);
    std::swap(out.views[0], out.views[1]);  // in another order than the reference's
    return out;
  };
  names = {"output['shifted']", "output['doubled']"};
  EXPECT_EQ(f.run().rows()[0].verdict, EvaluationVerdict::faster);
  shift = 101;
  const kscope::EvaluationRow wrong = f.run().rows()[0];
  EXPECT_NE(wrong.reason.find("output['shifted']: 64 of 64 elements outside"), std::string::npos) << wrong.reason;
  names = {"output['moved']", "output['doubled']"};
  shift = 100;
  const kscope::EvaluationRow renamed = f.run().rows()[0];
  EXPECT_EQ(renamed.verdict, EvaluationVerdict::incorrect);
  EXPECT_NE(renamed.mismatch.find("the candidate's outputs are not named as the reference's: it lacks "
                                  "output['shifted'], and returns output['moved'], which the reference does not return"),
            std::string::npos)
      << renamed.mismatch;
}

// What the caller's functions throw names the function: inputs and the reference stop the evaluation
// (the candidate's makes it incorrect, its Reason saying so).
TEST(Evaluate, TheFunctionThatThrewIsNamed) {
  for (const char* which : {"inputs", "reference"}) {
    Fixture f;
    const auto thrown = [](const auto&...) -> Tensors { throw std::runtime_error("no such size"); };
    if (std::string(which) == "inputs") f.contest.inputs = thrown;
    else f.contest.reference = thrown;
    try {
      f.run();
      ADD_FAILURE() << which << " threw nothing out of evaluate";
    } catch (const kscope::EvaluationError& e) {
      EXPECT_NE(std::string(e.what()).find(std::string("failed in warm-up run 1, in Contest::") + which +
                                           ": no such size"),
                std::string::npos)
          << e.what();
    }
  }
}

// The reference's inputs: in a run whose tensors are read, made again from the seed once the
// candidate has returned (before it, nothing differs between read and unread runs); in the other
// runs, the candidate's own. The first run is read, so inputs that differ for one seed are found.
TEST(Evaluate, ReadRunsMakeTheReferencesInputsAfterTheCandidateAndTheOthersShareThem) {
  Fixture f;
  f.settings.runs = 6;
  f.options.checked_runs = 2;
  std::vector<std::string> order;
  std::vector<const float*> made_for_candidate;
  f.contest.inputs = [&](const kscope::Config&, std::uint64_t seed) {
    order.push_back("inputs");
    return random_inputs(64, seed);
  };
  const auto recording = [&](const char* name, auto function) {
    return [&, name, function](const Tensors& in) {
      order.push_back(name);
      if (std::string(name) == "candidate") made_for_candidate.push_back(buffer_of(in).data());
      else if (buffer_of(in).data() == made_for_candidate.back()) order.back() += " (shared)";
      return function(in);
    };
  };
  f.contest.candidate = recording("candidate", f.contest.candidate);
  f.contest.reference = recording("reference", f.contest.reference);
  const kscope::Evaluation e = f.run();
  EXPECT_EQ(e.rows()[0].verdict, EvaluationVerdict::faster) << e.rows()[0].reason;
  EXPECT_EQ(e.rows()[0].checked_runs, 3u);
  std::size_t read = 0, shared = 0;
  for (std::size_t i = 0; i + 1 < order.size(); ++i) {
    if (order[i] != "candidate") continue;
    if (order[i + 1] == "inputs" && i + 2 < order.size() && order[i + 2] == "reference") ++read;
    else if (order[i + 1] == "reference (shared)") ++shared;
    else ADD_FAILURE() << "after a candidate's call: " << order[i + 1];
  }
  EXPECT_EQ(read, 3u);    // the warm-up and the 2 drawn
  EXPECT_EQ(shared, 4u);  // the other recorded runs
  EXPECT_EQ(std::count(order.begin(), order.end(), "inputs"), 7 + 3);

  std::uint64_t calls = 0;
  f.contest.inputs = [&](const kscope::Config&, std::uint64_t seed) { return random_inputs(64, seed + calls++); };
  EXPECT_THROW(
      {
        try {
          f.run();
        } catch (const kscope::ConfigError& e) {
          EXPECT_NE(std::string(e.what()).find("different inputs for the same seed"), std::string::npos) << e.what();
          throw;
        }
      },
      kscope::ConfigError);
}

// A reference that fails in a run where it was given the candidate's inputs says so: the candidate
// may have changed them (here it empties them), which a read run would have found.
TEST(Evaluate, AReferenceFailingOnTheCandidatesInputsSaysItWasGivenThem) {
  Fixture f;
  f.settings.runs = 6;
  f.options.checked_runs = 1;
  f.contest.candidate = [&](const Tensors& in) {
    Tensors out = doubled(in, f.sim, "candidate_kernel", 500);
    buffer_of(in).clear();
    return out;
  };
  f.contest.reference = [&](const Tensors& in) {
    if (buffer_of(in).empty()) throw std::runtime_error("no elements");
    return doubled(in, f.sim, "reference_kernel", 1000);
  };
  try {
    f.run();
    ADD_FAILURE() << "the reference's failure did not stop the evaluation";
  } catch (const kscope::EvaluationError& e) {
    EXPECT_NE(std::string(e.what()).find("in Contest::reference (given the candidate's inputs after its call, which "
                                         "may have changed them): no elements"),
              std::string::npos)
        << e.what();
  }
}

TEST(Evaluate, ToleranceOptionsWidenTheCheck) {
  Fixture f;
  f.options.rtol = 1e-2;
  f.contest.candidate = [&](const Tensors& in) {
    Tensors out = doubled(in, f.sim, "candidate_kernel", 500);
    for (float& x : buffer_of(out)) x *= 1.001f;
    return out;
  };
  EXPECT_EQ(f.run().rows()[0].verdict, EvaluationVerdict::faster);
}

TEST(Evaluate, ACandidateThatRaisesIsIncorrectAndTheEvaluationGoesOn) {
  Fixture f;
  f.sweep = kscope::Sweep().axis("n", {std::int64_t{8}, std::int64_t{64}});
  f.contest.candidate = [&](const Tensors& in) -> Tensors {
    if (buffer_of(in).size() == 8) throw std::runtime_error("no kernel for n=8");
    return doubled(in, f.sim, "candidate_kernel", 500);
  };
  const kscope::Evaluation e = f.run();
  ASSERT_EQ(e.rows().size(), 2u);
  EXPECT_EQ(e.rows()[0].verdict, EvaluationVerdict::incorrect);
  EXPECT_NE(e.rows()[0].reason.find("the candidate raised no kernel for n=8"), std::string::npos) << e.rows()[0].reason;
  EXPECT_EQ(e.rows()[1].verdict, EvaluationVerdict::faster);
}

TEST(Evaluate, AReferenceThatRaisesStopsTheEvaluationWithTheConfigsBefore) {
  Fixture f;
  f.sweep = kscope::Sweep().axis("n", {std::int64_t{64}, std::int64_t{8}});
  f.contest.reference = [&](const Tensors& in) -> Tensors {
    if (buffer_of(in).size() == 8) throw std::runtime_error("reference broken");
    return doubled(in, f.sim, "reference_kernel", 1000);
  };
  try {
    f.run();
    FAIL() << "no EvaluationError";
  } catch (const kscope::EvaluationError& e) {
    EXPECT_NE(std::string(e.what()).find("reference broken"), std::string::npos) << e.what();
    ASSERT_EQ(e.partial_evaluation().rows().size(), 1u);
    EXPECT_EQ(e.partial_evaluation().rows()[0].verdict, EvaluationVerdict::faster);
  }
}

// ---- The findings, each on the attack it stops ------------------------------------------------

TEST(Evaluate, WorkMovedToAnotherStreamIsTimedAndUnjoinedWorkIsAFinding) {
  Fixture f;
  f.contest.candidate = [&](const Tensors& in) {
    f.sim.launch("side_kernel", 2000, 0, /*stream=*/7);  // the real work, on a stream nobody waits for
    return doubled(in, f.sim, "candidate_kernel", 100);
  };
  const kscope::Evaluation e = f.run();
  const kscope::EvaluationRow& row = e.rows()[0];
  EXPECT_EQ(row.verdict, EvaluationVerdict::suspect);
  EXPECT_TRUE(has(row, Finding::unjoined_work)) << findings_text(e);
  EXPECT_DOUBLE_EQ(row.candidate_median_ns, 2000);  // the whole work is timed
  EXPECT_LT(row.speedup, 1);
}

TEST(Evaluate, ASideStreamJoinedBeforeTheCallReturnsIsHonest) {
  Fixture f;
  f.contest.candidate = [&](const Tensors& in) {
    f.sim.launch("side_kernel", 300, 0, 7);
    Tensors out = doubled(in, f.sim, "candidate_kernel", 200);
    f.sim.join(7, 0);
    return out;
  };
  const kscope::Evaluation e = f.run();
  EXPECT_EQ(e.rows()[0].verdict, EvaluationVerdict::faster) << e.rows()[0].reason << findings_text(e);
  EXPECT_DOUBLE_EQ(e.rows()[0].candidate_median_ns, 300);
}

TEST(Evaluate, WorkLaunchedAfterTheCallReturnedIsTimedAndAFinding) {
  Fixture f;
  std::atomic<bool> in_candidate{false};
  f.contest.candidate = [&](const Tensors& in) {
    in_candidate = true;
    return doubled(in, f.sim, "candidate_kernel", 100);
  };
  // Another thread launching while kscope waits for the GPU after the candidate returned.
  f.sim.during_synchronize([&] {
    if (in_candidate.exchange(false)) f.sim.launch("late_kernel", 900);
  });
  const kscope::Evaluation e = f.run();
  EXPECT_TRUE(has(e.rows()[0], Finding::work_after_return)) << findings_text(e);
  EXPECT_DOUBLE_EQ(e.rows()[0].candidate_median_ns, 1000);
}

TEST(Evaluate, AnOutputFilledByAThreadAfterTheCallReturnedIsAFinding) {
  Fixture f;
  std::shared_ptr<Buffer> pending;
  std::vector<float> answer;
  f.contest.candidate = [&](const Tensors& in) {
    f.sim.launch("candidate_kernel", 100);
    answer = buffer_of(in);
    for (float& x : answer) x *= 2;
    pending = std::make_shared<Buffer>(answer.size(), 0.0f);  // filled later, "by a thread"
    return tensors_of(pending);
  };
  f.contest.reference = [&](const Tensors& in) {
    std::copy(answer.begin(), answer.end(), pending->begin());  // the late fill lands before the check
    return doubled(in, f.sim, "reference_kernel", 1000);
  };
  const kscope::Evaluation e = f.run();
  EXPECT_EQ(e.rows()[0].verdict, EvaluationVerdict::suspect) << e.rows()[0].reason;
  EXPECT_TRUE(has(e.rows()[0], Finding::work_after_return)) << findings_text(e);
}

TEST(Evaluate, WorkOnSomeCallsOnlyIsVaryingWork) {
  Fixture f;
  int calls = 0;
  f.contest.candidate = [&](const Tensors& in) {
    if (++calls % 5 == 0) f.sim.launch("batched_kernel", 2500);
    return doubled(in, f.sim, "candidate_kernel", 100);
  };
  const kscope::Evaluation e = f.run();
  EXPECT_EQ(e.rows()[0].verdict, EvaluationVerdict::suspect);
  EXPECT_TRUE(has(e.rows()[0], Finding::varying_work)) << findings_text(e);
}

TEST(Evaluate, TheSameKernelDoingTheWorkOnSomeCallsOnlyIsVaryingTime) {
  Fixture f;
  int calls = 0;
  f.contest.candidate = [&](const Tensors& in) {
    return doubled(in, f.sim, "candidate_kernel", ++calls % 5 == 0 ? 2500 : 100);
  };
  const kscope::Evaluation e = f.run();
  EXPECT_TRUE(has(e.rows()[0], Finding::varying_time)) << findings_text(e);
  EXPECT_FALSE(has(e.rows()[0], Finding::varying_work)) << findings_text(e);
}

TEST(Evaluate, OneSlowRunOrASlowReferenceTooIsNotVaryingTime) {
  Fixture one;
  int calls = 0;
  one.contest.candidate = [&](const Tensors& in) {
    return doubled(in, one.sim, "candidate_kernel", ++calls == 7 ? 5000 : 500);
  };
  EXPECT_EQ(one.run().rows()[0].verdict, EvaluationVerdict::faster);

  Fixture both;
  int pairs = 0;
  both.contest.candidate = [&](const Tensors& in) {
    return doubled(in, both.sim, "candidate_kernel", ++pairs % 5 == 0 ? 5000 : 500);
  };
  both.contest.reference = [&](const Tensors& in) {
    return doubled(in, both.sim, "reference_kernel", pairs % 5 == 0 ? 10000 : 1000);
  };
  EXPECT_EQ(both.run().rows()[0].verdict, EvaluationVerdict::faster);
}

TEST(Evaluate, AHostLateToLaunchTheSecondKernelIsNotVaryingTime) {
  // A busy host (compile workers beside the measuring one) issues the second of two kernels late in
  // some runs: the call's span grows, its work does not.
  Fixture f;
  int calls = 0;
  f.contest.candidate = [&](const Tensors& in) {
    f.sim.launch("candidate_first", 100);
    f.sim.launch("candidate_second", 100, ++calls % 5 == 0 ? 4000 : 0);
    return doubled(in, f.sim, "candidate_third", 100);
  };
  const kscope::Evaluation e = f.run();
  EXPECT_GT(e.rows()[0].candidate_median_ns, 0);
  EXPECT_FALSE(has(e.rows()[0], Finding::varying_time)) << findings_text(e);
  EXPECT_EQ(e.rows()[0].verdict, EvaluationVerdict::faster) << e.rows()[0].reason;
}

TEST(Evaluate, AnElementsRelativeErrorIsDividedOutOnlyWhereItCouldRaiseTheLargestSeen) {
  // The device comparison gives each element its thread's largest relative error so far: an element
  // that cannot exceed it reports 0 (no division), any other its exact quotient, so the largest is
  // the same as with every quotient computed.
  using kscope::detail::judge;
  const double inf = std::numeric_limits<double>::infinity();
  std::mt19937_64 random(7);
  std::uniform_real_distribution<double> value(-4, 4);
  double largest = 0, largest_filtered = 0;
  for (int i = 0; i < 100000; ++i) {
    const double r = value(random), c = r + value(random) * 1e-3;
    const auto exact = judge(c, r, 1e-5, 1e-5, 3.4e38);
    const auto filtered = judge(c, r, 1e-5, 1e-5, 3.4e38, largest_filtered);
    ASSERT_EQ(filtered.passes, exact.passes);
    ASSERT_EQ(filtered.abs_error, exact.abs_error);
    ASSERT_TRUE(filtered.rel_error == exact.rel_error ||
                (filtered.rel_error == 0 && exact.rel_error <= largest_filtered))
        << c << " against " << r;
    largest = std::fmax(largest, exact.rel_error);
    largest_filtered = std::fmax(largest_filtered, filtered.rel_error);
  }
  EXPECT_EQ(largest_filtered, largest);
  EXPECT_EQ(judge(1.25, 1.0, 0, 0.5, inf, 0.5).rel_error, 0.0);   // 0.25 cannot exceed 0.5
  EXPECT_EQ(judge(1.75, 1.0, 0, 0.5, inf, 0.5).rel_error, 0.75);  // above it: exact
  EXPECT_EQ(judge(1.0, 0.0, 0, 0, inf, 1e300).rel_error, inf);    // no scale: infinite, whatever was seen
}

TEST(Evaluate, ACallWithoutGpuWorkIsNoWork) {
  Fixture f;
  f.contest.candidate = [&](const Tensors& in) {
    auto out = std::make_shared<Buffer>(buffer_of(in));
    for (float& x : *out) x *= 2;  // on the host: no kernel at all
    return tensors_of(out);
  };
  const kscope::Evaluation e = f.run();
  EXPECT_EQ(e.rows()[0].verdict, EvaluationVerdict::suspect);
  EXPECT_TRUE(has(e.rows()[0], Finding::no_work)) << findings_text(e);
  EXPECT_EQ(e.rows()[0].candidate_median_ns, 0);
}

TEST(Evaluate, TheAnswerWrittenIntoTheInputAliasesItAndMutatesIt) {
  Fixture f;
  f.contest.candidate = [&](const Tensors& in) {
    f.sim.launch("candidate_kernel", 500);
    for (float& x : buffer_of(in)) x *= 2;
    return in;
  };
  const kscope::Evaluation e = f.run();
  EXPECT_EQ(e.rows()[0].verdict, EvaluationVerdict::suspect) << e.rows()[0].reason;
  EXPECT_TRUE(has(e.rows()[0], Finding::output_aliases_input)) << findings_text(e);
  EXPECT_TRUE(has(e.rows()[0], Finding::input_mutated)) << findings_text(e);
}

TEST(Evaluate, AnInPlaceOperationOnBothSidesIsHonest) {
  Fixture f;
  const auto in_place = [&](const char* kernel, double ns) {
    return [&f, kernel, ns](const Tensors& in) {
      f.sim.launch(kernel, ns);
      for (float& x : buffer_of(in)) x *= 2;
      return in;
    };
  };
  f.contest.reference = in_place("reference_kernel", 1000);
  f.contest.candidate = in_place("candidate_kernel", 500);
  const kscope::Evaluation e = f.run();
  EXPECT_EQ(e.rows()[0].verdict, EvaluationVerdict::faster) << e.rows()[0].reason << findings_text(e);
}

TEST(Evaluate, AnOutputHandedBackAgainAliasesTheEarlierOne) {
  Fixture f;
  auto kept = std::make_shared<Buffer>();
  f.contest.candidate = [&](const Tensors& in) {
    f.sim.launch("candidate_kernel", 500);
    *kept = buffer_of(in);  // correct every time, in the same buffer
    for (float& x : *kept) x *= 2;
    return tensors_of(kept);
  };
  const kscope::Evaluation e = f.run();
  EXPECT_TRUE(has(e.rows()[0], Finding::output_aliases_earlier_output)) << findings_text(e);
}

TEST(Evaluate, AnOutputInTheReferencesMemoryIsAFinding) {
  Fixture f;
  Tensors last_reference;
  f.contest.reference = [&](const Tensors& in) {
    last_reference = doubled(in, f.sim, "reference_kernel", 1000);
    return last_reference;
  };
  f.contest.candidate = [&](const Tensors& in) {
    f.sim.launch("candidate_kernel", 10);
    return last_reference.owner ? last_reference : doubled(in, f.sim, "candidate_kernel", 10);
  };
  const kscope::Evaluation e = f.run();
  EXPECT_TRUE(has(e.rows()[0], Finding::output_aliases_reference)) << findings_text(e);
  EXPECT_EQ(e.rows()[0].verdict, EvaluationVerdict::incorrect);  // the run before's answer is wrong for these inputs
}

TEST(Evaluate, AnswersCachedByInputAddressAreIncorrect) {
  Fixture f;
  std::map<const void*, std::shared_ptr<Buffer>> cache;
  f.contest.candidate = [&](const Tensors& in) {
    auto& hit = cache[in.views[0].data];
    if (!hit) hit = std::make_shared<Buffer>(buffer_of(doubled(in, f.sim, "candidate_kernel", 500)));
    f.sim.launch("lookup_kernel", 10);
    return tensors_of(hit);
  };
  const kscope::Evaluation e = f.run();
  // Fresh values every run: an address seen before holds another run's answer.
  EXPECT_GT(cache.size(), 0u);
  EXPECT_LT(cache.size(), 21u) << "the allocator reused no address, so the cache never hit; the test shows nothing";
  EXPECT_EQ(e.rows()[0].verdict, EvaluationVerdict::incorrect) << e.rows()[0].reason;
}

TEST(Evaluate, AReplayedRecordingOfTheFirstInputsIsIncorrect) {
  Fixture f;
  Tensors recorded;  // a "graph" captured on the first call's buffers, replayed on every later call
  f.contest.candidate = [&](const Tensors& in) {
    if (!recorded.owner) recorded = in;
    return doubled(recorded, f.sim, "replayed_kernel", 300);
  };
  EXPECT_EQ(f.run().rows()[0].verdict, EvaluationVerdict::incorrect);
}

TEST(Evaluate, SeveralKernelsPerCallAreHonest) {
  Fixture f;
  f.contest.candidate = [&](const Tensors& in) {
    f.sim.launch("prologue_kernel", 100);
    f.sim.launch("[memcpy DtoD]", 50);
    return doubled(in, f.sim, "main_kernel", 200);
  };
  const kscope::Evaluation e = f.run();
  EXPECT_EQ(e.rows()[0].verdict, EvaluationVerdict::faster) << e.rows()[0].reason << findings_text(e);
  EXPECT_DOUBLE_EQ(e.rows()[0].candidate_median_ns, 350);  // the span of all three
}

TEST(Evaluate, APersistingL2CarveOutIsResetAndAFinding) {
  Fixture f;
  f.contest.candidate = [&](const Tensors& in) {
    f.sim.set_persisting_l2(1 << 20);
    return doubled(in, f.sim, "candidate_kernel", 500);
  };
  const kscope::Evaluation e = f.run();
  EXPECT_TRUE(has(e.rows()[0], Finding::persisting_l2)) << findings_text(e);
  EXPECT_EQ(f.sim.persisting_l2_resets(), 21u);
}

TEST(Evaluate, FasterThanTheRoofsAllowForTheDeclaredWorkIsImplausible) {
  Fixture f;
  // 1 GB in 500 ns would be 2000 TB/s: no GPU's DRAM delivers that.
  f.settings.work = [](const kscope::Config&) { return kscope::Work{.bytes = 1e9}; };
  const kscope::Evaluation e = f.run();
  EXPECT_TRUE(has(e.rows()[0], Finding::implausible_speed)) << findings_text(e);

  Fixture honest;
  honest.settings.work = [](const kscope::Config&) { return kscope::Work{.bytes = 1e3}; };
  EXPECT_EQ(honest.run().rows()[0].verdict, EvaluationVerdict::faster);
}

// ---- What evaluate refuses ---------------------------------------------------------------------

TEST(Evaluate, InputsThatIgnoreTheSeedOrDifferForOneSeedAreRefused) {
  Fixture constant;
  constant.contest.inputs = [](const kscope::Config&, std::uint64_t) { return random_inputs(64, 1); };
  EXPECT_NE(kscope_test::error_of([&] { constant.run(); }).find("the same inputs for two different seeds"),
            std::string::npos);

  Fixture unstable;
  int made = 0;
  unstable.contest.inputs = [&](const kscope::Config&, std::uint64_t seed) { return random_inputs(64, seed + made++); };
  EXPECT_NE(kscope_test::error_of([&] { unstable.run(); }).find("different inputs for the same seed"),
            std::string::npos);
}

TEST(Evaluate, OptionsThatWouldHideWorkAreRefusedNamingWhy) {
  const auto refused = [](auto change) {
    Fixture f;
    change(f.settings);
    return kscope_test::error_of([&] { f.run(); });
  };
  EXPECT_NE(refused([](kscope::Settings& s) { s.ignore_kernel_list = {"k"}; }).find("ignore_kernel_list"),
            std::string::npos);
  EXPECT_NE(refused([](kscope::Settings& s) { s.metrics = {"dram__bytes.sum"}; }).find("Settings::metrics"),
            std::string::npos);
  EXPECT_NE(refused([](kscope::Settings& s) { s.resume = true; }).find("evaluate again"), std::string::npos);
  Fixture f;
  f.options.confidence = 1.5;
  EXPECT_NE(kscope_test::error_of([&] { f.run(); }).find("EvaluateOptions::confidence is 1.5"), std::string::npos);
  f.options.confidence = 0.95;
  f.contest.candidate = nullptr;
  EXPECT_NE(kscope_test::error_of([&] { f.run(); }).find("Contest::candidate is empty"), std::string::npos);
}

// A backend that cannot see every stream (as CUDA events on one stream).
class OneStreamBackend final : public kscope::MeasurementBackend {
 public:
  std::vector<kscope::MetricSpec> metrics() const override { return sim_.metrics(); }
  kscope::SessionInfo describe() const override { return sim_.describe(); }
  void begin_session(const kscope::Settings& s) override { sim_.begin_session(s); }
  void end_session() noexcept override { sim_.end_session(); }
  void flush_cache() override {}
  void region_begin(const kscope::RegionContext&) override {}
  void region_end(const kscope::RegionContext&) override {}
  std::vector<kscope::RunMeasurement> collect_batch() override { return {}; }
  void abandon_run(const kscope::RunContext&) noexcept override {}

 private:
  SimulatedBackend sim_;
};

TEST(Evaluate, ABackendThatCannotSeeEveryStreamIsRefused) {
  Fixture f;
  OneStreamBackend backend;
  const std::string message = kscope_test::error_of(
      [&] { kscope::evaluate_with_backend(f.sweep, f.settings, f.contest, f.options, backend); });
  EXPECT_NE(message.find("cannot evaluate"), std::string::npos) << message;
  EXPECT_NE(message.find("Backend::cupti"), std::string::npos) << message;
}

// ---- The evaluation's file and tables ----------------------------------------------------------

TEST(Evaluate, TheFileRoundTripsAndLoadResultsReadsItsMeasurements) {
  Fixture f;
  f.contest.candidate = [&](const Tensors& in) {
    f.sim.launch("side_kernel", 2000, 0, 7);
    return doubled(in, f.sim, "candidate_kernel", 100);
  };
  const kscope::Evaluation e = f.run();
  std::stringstream file;
  e.write_json(file);
  const kscope::Evaluation back = kscope::load_evaluation(file, "memory");
  ASSERT_EQ(back.rows().size(), 1u);
  EXPECT_EQ(back.rows()[0].verdict, EvaluationVerdict::suspect);
  EXPECT_EQ(back.rows()[0].findings, e.rows()[0].findings);
  // Every column of both tables is read back (a column the file lost would differ here).
  EXPECT_EQ(csv_of(back.table()), csv_of(e.table()));
  ASSERT_EQ(back.findings().size(), e.findings().size());
  EXPECT_EQ(csv_of(back.findings_table()), csv_of(e.findings_table()));
  EXPECT_EQ(back.measurements().samples().size(), e.measurements().samples().size());
  std::stringstream again(file.str());
  EXPECT_EQ(kscope::load_results(again, "memory").samples().size(), 40u);
  EXPECT_EQ(back.options().checked_runs, 8u);
  // A file from before checked_runs read every run.
  std::string old_file = file.str();
  const std::size_t key = old_file.find("\"checked_runs\"");
  ASSERT_NE(key, std::string::npos);
  old_file.replace(key, std::string("\"checked_runs\"").size(), "\"unknown_key\"");
  std::stringstream older(old_file);
  EXPECT_EQ(kscope::load_evaluation(older, "older").options().checked_runs, 0u);

  // A file whose Findings is a list of names, as files were written before it was the table's text.
  nlohmann::json listed = nlohmann::json::parse(file.str());
  listed["evaluation"]["rows"][0]["Findings"] = nlohmann::json::array({"unjoined_work"});
  std::stringstream listed_file(listed.dump());
  EXPECT_EQ(kscope::load_evaluation(listed_file, "listed").rows()[0].findings,
            std::vector<Finding>{Finding::unjoined_work});
  // A cell the column never holds is refused with what it takes.
  nlohmann::json wrong = nlohmann::json::parse(file.str());
  wrong["evaluation"]["rows"][0]["Verdict"] = "great";
  std::stringstream wrong_file(wrong.dump());
  const std::string message = kscope_test::error_of([&] { kscope::load_evaluation(wrong_file, "wrong"); });
  EXPECT_NE(message.find("\"rows\" 0 \"Verdict\" must be one of \"faster\""), std::string::npos) << message;

  std::stringstream plain;
  e.measurements().write_json(plain);
  EXPECT_NE(kscope_test::error_of([&] { kscope::load_evaluation(plain, "plain"); }).find("not an evaluation"),
            std::string::npos);
}

TEST(Evaluate, TheFileHoldsEveryColumnOfItsTables) {
  // The file's rows are the tables' columns, so that a column added to a table is in the file.
  Fixture f;
  f.contest.candidate = [&](const Tensors& in) {
    f.sim.launch("side_kernel", 2000, 0, 7);
    return doubled(in, f.sim, "candidate_kernel", 100);
  };
  std::stringstream file;
  f.run().write_json(file);
  const nlohmann::ordered_json section = nlohmann::ordered_json::parse(file.str())["evaluation"];
  const auto keys_of = [](const nlohmann::ordered_json& row) {
    std::vector<std::string> keys;
    for (const auto& [key, value] : row.items()) keys.push_back(key);
    return keys;
  };
  const auto expected = [](const std::vector<kscope::ColumnSpec>& columns) {
    std::vector<std::string> keys{"Config"};
    for (const kscope::ColumnSpec& c : columns) keys.push_back(c.name);
    return keys;
  };
  ASSERT_FALSE(section["rows"].empty());
  ASSERT_FALSE(section["findings"].empty());
  EXPECT_EQ(keys_of(section["rows"][0]), expected(kscope::evaluation_columns()));
  EXPECT_EQ(keys_of(section["findings"][0]), expected(kscope::finding_columns()));
}

TEST(Evaluate, TheReadableViewShowsTheColumnsItsTableMarks) {
  // operator<<'s header is the axes and evaluation_view_columns() (Python's str() and Jupyter's view
  // show the same): the columns the table marks shown, in its order.
  Fixture f;
  const kscope::Evaluation e = f.run();
  std::ostringstream out;
  out << e;
  std::istringstream lines(out.str());
  std::string headline, header;
  std::getline(lines, headline);
  std::getline(lines, header);
  std::istringstream words(header);
  std::vector<std::string> shown{std::istream_iterator<std::string>(words), std::istream_iterator<std::string>()};
  std::vector<std::string> expected{"n"};
  for (const std::string& c : kscope::evaluation_view_columns()) expected.push_back(c);
  EXPECT_EQ(shown, expected) << out.str();
  // The table's columns in their order, without those a reader rarely needs to judge a row.
  std::vector<std::string> in_order{"n"};
  for (const kscope::ColumnSpec& c : kscope::evaluation_columns())
    if (std::find(expected.begin(), expected.end(), c.name) != expected.end()) in_order.push_back(c.name);
  EXPECT_EQ(in_order, expected);
  for (const char* hidden : {"Mismatch", "GPU", "Backend", "FailingSeed"})
    EXPECT_EQ(std::find(expected.begin(), expected.end(), hidden), expected.end()) << hidden;
}

TEST(Evaluate, TheTableHasOneRowPerConfigWithTheVerdictFirst) {
  Fixture f;
  f.sweep = kscope::Sweep().axis("n", {std::int64_t{8}, std::int64_t{64}});
  const kscope::Table t = f.run().table();
  ASSERT_EQ(t.rows.size(), 2u);
  EXPECT_EQ(t.columns[0], "n");
  EXPECT_EQ(t.columns[1], "Verdict");
  EXPECT_EQ(std::get<std::string>(t.rows[0][1]), "faster");
  EXPECT_EQ(std::get<double>(t.rows[1][t.column("Speedup")]), 2.0);
}

// ---- The statistics and the element rules ------------------------------------------------------

TEST(EvaluateStatistics, TheMedianIntervalIsTheOrderStatisticsOfTheBinomialTail) {
  std::vector<double> twenty;
  for (int i = 1; i <= 20; ++i) twenty.push_back(i);
  std::shuffle(twenty.begin(), twenty.end(), std::mt19937(3));
  // P(Binomial(20, 1/2) <= 5) = 0.0207 <= 0.025 < P(<= 6) = 0.0577: the 6th and 15th values.
  const auto m = kscope::detail::median_interval(twenty, 0.95);
  EXPECT_DOUBLE_EQ(m.median, 10.5);
  EXPECT_DOUBLE_EQ(m.lower, 6);
  EXPECT_DOUBLE_EQ(m.upper, 15);
  // Six values: P(B <= 0) = 1/64 <= 0.025, so the extremes; five: 1/32 > 0.025, no interval.
  EXPECT_DOUBLE_EQ(kscope::detail::median_interval({1, 2, 3, 4, 5, 6}, 0.95).lower, 1);
  EXPECT_TRUE(std::isnan(kscope::detail::median_interval({1, 2, 3, 4, 5}, 0.95).lower));
}

TEST(EvaluateStatistics, SeedsDifferByRunAndConfigAndSuitEveryGenerator) {
  std::vector<std::uint64_t> seeds;
  for (std::size_t c = 0; c < 4; ++c)
    for (std::size_t r = 0; r < 50; ++r) seeds.push_back(kscope::seed_of(0, c, r));
  for (auto s : seeds) EXPECT_LT(s, 1ull << 31);
  std::sort(seeds.begin(), seeds.end());
  EXPECT_EQ(std::unique(seeds.begin(), seeds.end()), seeds.end());
  EXPECT_NE(kscope::seed_of(1, 0, 0), kscope::seed_of(0, 0, 0));
}

TensorView host_view(const void* data, std::size_t n, kscope::DType dtype) {
  return TensorView{data, {static_cast<std::int64_t>(n)}, dtype, kscope::MemorySpace::host};
}

TEST(TensorChecks, HalfPrecisionTypesDecodeAsTheirBitsSay) {
  // float16: 1.0 = 0x3c00, -2.0 = 0xc000, 65504 = 0x7bff, the smallest subnormal 0x0001, +inf 0x7c00
  const std::uint16_t half[] = {0x3c00, 0xc000, 0x7bff, 0x0001, 0x7c00};
  const std::uint16_t half_ref[] = {0x3c00, 0xc000, 0x7bff, 0x0001, 0x7c00};
  EXPECT_EQ(kscope::detail::host_compare(host_view(half, 5, kscope::DType::f16), host_view(half_ref, 5, kscope::DType::f16),
                                         0, 0).mismatched, 0u);
  const std::uint16_t half_one_ulp_off[] = {0x3c01};
  const auto off = kscope::detail::host_compare(host_view(half_one_ulp_off, 1, kscope::DType::f16),
                                                host_view(half, 1, kscope::DType::f16), 0, 0);
  EXPECT_EQ(off.mismatched, 1u);
  EXPECT_DOUBLE_EQ(off.first_candidate, 1.0 + 1.0 / 1024);
  EXPECT_DOUBLE_EQ(off.first_reference, 1.0);
  // bfloat16: 1.5 = 0x3fc0; float8_e4m3fn: 1.0 = 0x38, its NaN 0x7f; float8_e5m2: 1.0 = 0x3c
  const std::uint16_t bf[] = {0x3fc0};
  const float one_and_half = 1.5f;
  EXPECT_EQ(kscope::detail::host_compare(host_view(bf, 1, kscope::DType::bf16), host_view(bf, 1, kscope::DType::bf16), 0, 0)
                .max_abs_error, 0);
  const std::uint8_t e4m3[] = {0x38, 0x7f};
  const auto nan_checked = kscope::detail::host_compare(host_view(e4m3, 2, kscope::DType::f8_e4m3),
                                                        host_view(e4m3, 2, kscope::DType::f8_e4m3), 0, 0);
  EXPECT_EQ(nan_checked.mismatched, 0u);  // NaN matches NaN
  const std::uint8_t e4m3_two[] = {0x40};
  const auto two = kscope::detail::host_compare(host_view(e4m3_two, 1, kscope::DType::f8_e4m3),
                                                host_view(e4m3, 1, kscope::DType::f8_e4m3), 0, 0);
  EXPECT_DOUBLE_EQ(two.first_candidate, 2.0);
  EXPECT_DOUBLE_EQ(two.first_reference, 1.0);
  (void)one_and_half;
}

TEST(TensorChecks, NanAndInfinityRulesAndIntegersCompareExactly) {
  const float c[] = {NAN, INFINITY, 1.0f, -INFINITY};
  const float r[] = {NAN, INFINITY, NAN, INFINITY};
  const auto out = kscope::detail::host_compare(host_view(c, 4, kscope::DType::f32), host_view(r, 4, kscope::DType::f32),
                                                1e-3, 1e-3);
  EXPECT_EQ(out.mismatched, 2u);
  EXPECT_EQ(out.first_mismatch, 2u);
  EXPECT_TRUE(std::isinf(out.max_abs_error));
  // 2^53 + 1 and 2^53 are the same double, not the same integer.
  const std::int64_t big[] = {(std::int64_t{1} << 53) + 1};
  const std::int64_t big_ref[] = {std::int64_t{1} << 53};
  EXPECT_EQ(kscope::detail::host_compare(host_view(big, 1, kscope::DType::i64), host_view(big_ref, 1, kscope::DType::i64),
                                         0, 0).mismatched, 1u);
}

// A mask's fill is matched only by itself, whatever the tolerance: a candidate that fills masked
// elements with another large value, or a float16 output one step below its largest value, is wrong.
TEST(TensorChecks, TheDtypesExtremesMatchOnlyThemselves) {
  const float lowest = std::numeric_limits<float>::lowest();
  const float reference[] = {lowest, 1.0f, -std::numeric_limits<float>::max()};
  const float candidate[] = {-3.0e38f, 1.0f, lowest};
  const auto masked = kscope::detail::host_compare(host_view(candidate, 3, kscope::DType::f32),
                                                   host_view(reference, 3, kscope::DType::f32), 1e38, 0.5);
  EXPECT_EQ(masked.mismatched, 1u);
  EXPECT_EQ(masked.first_mismatch, 0u);
  EXPECT_EQ(masked.first_reference, lowest);
  // float16: 65504 (0x7bff), its largest, against 65472 (0x7bfe), within rtol 5e-3 of it.
  const std::uint16_t largest[] = {0x7bff}, below[] = {0x7bfe};
  EXPECT_EQ(kscope::detail::host_compare(host_view(below, 1, kscope::DType::f16), host_view(largest, 1, kscope::DType::f16),
                                         0, 5e-3).mismatched, 1u);
  EXPECT_EQ(kscope::detail::host_compare(host_view(largest, 1, kscope::DType::f16), host_view(below, 1, kscope::DType::f16),
                                         0, 5e-3).mismatched, 1u);
  EXPECT_EQ(kscope::detail::host_compare(host_view(largest, 1, kscope::DType::f16),
                                         host_view(largest, 1, kscope::DType::f16), 0, 0).mismatched, 0u);
}

// atol's scale: the median magnitude of the ordinary elements with its mantissa cut to 8 bits (at
// most 0.4% below the median, never above), which a mask's fill, infinities, NaN and zeros of padding
// leave exactly as it is, and a tenth of the elements far larger moves only within the ordinary ones.
TEST(TensorChecks, TheTypicalMagnitudeIsTheMedianOfTheOrdinaryElements) {
  std::vector<float> ordinary;
  for (int i = 1; i <= 1001; ++i) ordinary.push_back((i % 2 ? 0.01f : -0.01f) * static_cast<float>(i));
  const auto typical = [](const std::vector<float>& v) {
    return kscope::detail::host_typical_magnitude(host_view(v.data(), v.size(), kscope::DType::f32));
  };
  const double median = 0.01f * 501;
  const double scale = typical(ordinary);
  EXPECT_LE(scale, median);
  EXPECT_GE(scale, median * (1 - 1.0 / 256));

  std::vector<float> special = ordinary;
  special.insert(special.end(), 3000, 0.0f);  // padding
  special.insert(special.end(), 900, std::numeric_limits<float>::lowest());  // a mask's fill
  special.insert(special.end(), 100, std::numeric_limits<float>::max());
  special.insert(special.end(), 50, -std::numeric_limits<float>::infinity());
  special.insert(special.end(), 50, std::numeric_limits<float>::quiet_NaN());
  EXPECT_EQ(typical(special), scale);

  std::vector<float> with_large = ordinary;
  with_large.insert(with_large.end(), 100, 1e30f);
  EXPECT_GT(typical(with_large), scale);
  EXPECT_LT(typical(with_large), 10.02);  // still one of the ordinary magnitudes

  EXPECT_EQ(typical(std::vector<float>(64, 0.0f)), 0);  // nothing to scale by: atol 0
  const std::int32_t integers[] = {-7, 0, 3, 100, -2};
  EXPECT_EQ(kscope::detail::host_typical_magnitude(host_view(integers, 5, kscope::DType::i32)), 3);
}

TEST(TensorChecks, AToleranceAddingTheScaledMagnitudeSaysTheAtolItApplied) {
  const float reference[] = {1, 2, 3, 4, 1000};
  const float candidate[] = {1, 2, 3.001f, 4, 1000};
  const auto r = host_view(reference, 5, kscope::DType::f32), c = host_view(candidate, 5, kscope::DType::f32);
  const double typical = kscope::detail::host_typical_magnitude(r);
  EXPECT_EQ(typical, 3);  // the median of 1, 2, 3, 4, 1000
  // atol 1e-5 + 1e-4 * 3 = 3.1e-4 against |3.001 - 3| + rtol * 3: 1e-3 > 6.1e-4, a mismatch.
  const auto scaled = kscope::detail::host_compare(c, r, kscope::Tolerance{1e-5, 1e-4, true});
  EXPECT_EQ(scaled.atol, 1e-5 + 1e-4 * typical);
  EXPECT_EQ(scaled.mismatched, 1u);
  EXPECT_EQ(scaled.first_mismatch, 2u);
  const auto given = kscope::detail::host_compare(c, r, kscope::Tolerance{1e-2, 1e-4});
  EXPECT_EQ(given.atol, 1e-2);
  EXPECT_EQ(given.mismatched, 0u);
  // Through the interface evaluate uses, host tensors read where they point.
  kscope::detail::HostTensorChecks device;
  kscope::detail::ChecksByMemory checks(device);
  const auto both = checks.compare({c, c}, {r, r}, {kscope::Tolerance{1e-5, 1e-4, true}, kscope::Tolerance{1e-2, 1e-4}});
  EXPECT_EQ(both.at(0).atol, scaled.atol);
  EXPECT_EQ(both.at(0).mismatched, 1u);
  EXPECT_EQ(both.at(1).atol, 1e-2);
}

TEST(TensorChecks, TheChecksumSeesAnyChangeAndAnyMove) {
  std::vector<float> a{1, 2, 3, 4, 5};
  const auto sum = kscope::detail::host_checksum(host_view(a.data(), a.size(), kscope::DType::f32));
  std::swap(a[0], a[1]);
  EXPECT_NE(kscope::detail::host_checksum(host_view(a.data(), a.size(), kscope::DType::f32)), sum);
  std::swap(a[0], a[1]);
  EXPECT_EQ(kscope::detail::host_checksum(host_view(a.data(), a.size(), kscope::DType::f32)), sum);
  a[4] = std::nextafter(a[4], 10.0f);
  EXPECT_NE(kscope::detail::host_checksum(host_view(a.data(), a.size(), kscope::DType::f32)), sum);
}

}  // namespace

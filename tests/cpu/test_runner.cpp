// The whole engine against the simulated backend: runs, warm-ups, attribution rules, errors,
// partial results, derived metrics, normalization and flushing.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <future>
#include <optional>
#include <random>
#include <thread>
#include <utility>
#include <variant>
#include <vector>

#include "kscope/annotation.hpp"
#include "kscope/detail/settings_fields.hpp"
#include "kscope/errors.hpp"
#include "kscope/profile.hpp"
#include "kscope/statistics.hpp"
#include "kscope/testing.hpp"
#include "test_support.hpp"

using namespace kscope;
using kscope::testing::SimulatedBackend;
using kscope_test::error_of;
using kscope_test::quiet;

namespace {

// The message of the SweepError's cause, and the cause's type check.
template <typename Cause>
std::string cause_message(const SweepError& e) {
  try {
    std::rethrow_exception(e.cause());
  } catch (const Cause& c) {
    return c.what();
  } catch (...) {
    return "cause of another type";
  }
}

}  // namespace

TEST(Runner, CallsBodyWarmupPlusRunsTimesPerConfigAndRecordsOnlyRuns) {
  SimulatedBackend backend;
  int calls = 0;
  auto sweep = Sweep().axis("n", {1, 2});
  auto r = profile_with_backend(sweep, quiet(4), [&](const Config& c) {
    ++calls;
    Annotation a("k");
    backend.launch("kernel", 100.0 * static_cast<double>(c.get<std::int64_t>("n")));
  }, backend);
  EXPECT_EQ(calls, 2 * (1 + 4));
  EXPECT_EQ(r.samples().size(), 2u * 4u);
  ASSERT_EQ(r.rows().size(), 2u);
  EXPECT_EQ(r.at("k", "test__kernel_duration", 0).stats.count, 4u);
  EXPECT_DOUBLE_EQ(r.at("k", "test__kernel_duration", 1).avg_value, 200.0);
  EXPECT_EQ(r.rows()[0].kernel, "kernel");
  EXPECT_EQ(r.session().backend, Backend::simulated);
  EXPECT_FALSE(backend.session_open());
}

TEST(Runner, StatisticsComeFromTheRecordedSamples) {
  SimulatedBackend backend;
  const std::vector<double> durations{999, 10, 20, 30, 40, 50};  // the first is the warm-up
  std::size_t call = 0;
  auto r = profile_with_backend(Sweep(), quiet(5), [&](const Config&) {
    Annotation a("k");
    backend.launch("kern", durations[call++]);
  }, backend);
  const auto& row = r.at("k", "test__kernel_duration", 0);
  EXPECT_DOUBLE_EQ(row.stats.mean, 30.0);
  EXPECT_DOUBLE_EQ(row.stats.min, 10.0);
  EXPECT_DOUBLE_EQ(row.stats.max, 50.0);
  EXPECT_DOUBLE_EQ(row.stats.median, 30.0);
  EXPECT_NEAR(row.stats.stddev, 15.8113883, 1e-6);
  EXPECT_NEAR(row.stats.rsd_pct, 52.7046277, 1e-5);
  EXPECT_EQ(row.stats.stable, std::optional<bool>(false));
}

TEST(Runner, SeveralAnnotationsPerRunAreSeparateRows) {
  SimulatedBackend backend;
  auto r = profile_with_backend(Sweep(), quiet(2), [&](const Config&) {
    { Annotation a("first"); backend.launch("a", 1); }
    backend.launch("outside", 5);  // not in any region: not attributed
    { Annotation b("second"); backend.launch("b", 2); }
  }, backend);
  ASSERT_EQ(r.rows().size(), 2u);
  EXPECT_EQ(r.rows()[0].annotation, "first");
  EXPECT_EQ(r.rows()[1].annotation, "second");
  EXPECT_DOUBLE_EQ(r.rows()[1].avg_value, 2.0);
}

TEST(Runner, FlushesBeforeEveryRegionOnlyWithCacheControlAll) {
  SimulatedBackend backend;
  auto body = [&](const Config&) {
    { Annotation a("a"); backend.launch("k", 1); }
    { Annotation b("b"); backend.launch("k", 1); }
  };
  Settings s = quiet(3);
  profile_with_backend(Sweep().axis("n", {1, 2}), s, body, backend);
  EXPECT_EQ(backend.flush_count(), 2u * 2u * (3u + 1u));
  SimulatedBackend warm;
  s.cache_control = CacheControl::none;
  auto r = profile_with_backend(Sweep(), s, [&](const Config&) { Annotation a("a"); warm.launch("k", 1); }, warm);
  EXPECT_EQ(warm.flush_count(), 0u);
  EXPECT_EQ(r.session().cache_control, CacheControl::none);
}

TEST(Runner, RegionWithoutKernelIsAnErrorNamingTheRegion) {
  SimulatedBackend backend;
  try {
    profile_with_backend(Sweep().axis("n", {8}), quiet(), [&](const Config&) { Annotation a("empty_region"); }, backend);
    FAIL() << "expected SweepError";
  } catch (const SweepError& e) {
    const std::string msg = cause_message<KernelCountError>(e);
    EXPECT_EQ(msg.rfind("No kernels were profiled in annotation 'empty_region' in this run", 0), 0u) << msg;
    EXPECT_NE(std::string(e.what()).find("config 1/1 (n=8) failed in warm-up run 1"), std::string::npos) << e.what();
    EXPECT_EQ(e.failed_config(), "n=8");
  }
  EXPECT_FALSE(backend.session_open());
}

TEST(Runner, SeveralKernelsNeedACombineRuleOrIgnoreList) {
  SimulatedBackend backend;
  auto body = [&](const Config&) {
    Annotation a("pair");
    backend.launch("void scale<float>(float*)", 10);
    backend.launch("void shift(float*)", 5);
  };
  try {
    profile_with_backend(Sweep(), quiet(), body, backend);
    FAIL() << "expected SweepError";
  } catch (const SweepError& e) {
    const std::string msg = cause_message<KernelCountError>(e);
    EXPECT_EQ(msg.rfind("More than one (total=2) kernel is launched within the pair annotation (in one run):\n"
                        "  - void scale<float>(float*)\n  - void shift(float*)", 0),
              0u)
        << msg;
    EXPECT_NE(msg.find("combine_kernel_metrics"), std::string::npos);
    EXPECT_NE(msg.find("Settings::replay_mode = ReplayMode::range"), std::string::npos);
    EXPECT_NE(msg.find("ignore_kernel_list"), std::string::npos);
  }
  Settings combined = quiet();
  combined.combine_kernel_metrics = std::plus<double>();
  auto r = profile_with_backend(Sweep(), combined, body, backend);
  EXPECT_DOUBLE_EQ(r.rows()[0].avg_value, 15.0);
  EXPECT_EQ(r.rows()[0].kernel, "void scale<float>(float*)|void shift(float*)");

  Settings ignoring = quiet();
  ignoring.ignore_kernel_list = {"shift"};
  r = profile_with_backend(Sweep(), ignoring, body, backend);
  EXPECT_DOUBLE_EQ(r.rows()[0].avg_value, 10.0);
  EXPECT_EQ(r.rows()[0].kernel, "void scale<float>(float*)");
}

TEST(Runner, IgnoringEveryKernelOfARegionIsAnError) {
  SimulatedBackend backend;
  Settings s = quiet();
  s.ignore_kernel_list = {"only"};
  try {
    profile_with_backend(Sweep(), s, [&](const Config&) { Annotation a("r"); backend.launch("only", 1); }, backend);
    FAIL();
  } catch (const SweepError& e) {
    EXPECT_NE(cause_message<KernelCountError>(e).find("every kernel it launched is in ignore_kernel_list"),
              std::string::npos);
  }
}

TEST(Runner, NestedAndRepeatedAnnotationsAreErrors) {
  SimulatedBackend backend;
  try {
    profile_with_backend(Sweep(), quiet(), [&](const Config&) {
      Annotation outer("outer");
      Annotation inner("inner");
    }, backend);
    FAIL();
  } catch (const SweepError& e) {
    EXPECT_EQ(cause_message<AnnotationUseError>(e),
              "Nested annotations are not supported. Cannot enter annotation 'inner' while another annotation is "
              "active ('outer' is open): close the outer one first or merge the two regions");
  }
  try {
    profile_with_backend(Sweep(), quiet(), [&](const Config&) {
      { Annotation a("twice"); backend.launch("k", 1); }
      { Annotation b("twice"); backend.launch("k", 1); }
    }, backend);
    FAIL();
  } catch (const SweepError& e) {
    EXPECT_EQ(cause_message<AnnotationUseError>(e).rfind("Annotation name 'twice' has already been used in this "
                                                         "profiling run. Each annotation must have a unique name",
                                                         0),
              0u);
  }
}

// Thrown where the annotation opens, as Nsight Python raises its ValueError in annotate: a body that
// catches it goes on, and so does the sweep.
TEST(Runner, ABodyThatCatchesAnAnnotationUseErrorGoesOn) {
  SimulatedBackend backend;
  std::size_t caught = 0;
  const auto r = profile_with_backend(Sweep().axis("n", {1, 2}), quiet(2), [&](const Config&) {
    {
      Annotation outer("outer");
      try {
        Annotation inner("inner");
      } catch (const AnnotationUseError&) {
        ++caught;
      }
      backend.launch("k", 5);
    }
    try {
      Annotation again("outer");
    } catch (const AnnotationUseError&) {
      ++caught;
    }
  }, backend);
  EXPECT_EQ(caught, 2u * 2u * 3u);  // two per body call: 2 configs x (1 warm-up + 2 runs)
  ASSERT_EQ(r.rows().size(), 2u);
  EXPECT_EQ(r.rows()[0].annotation, "outer");
  EXPECT_DOUBLE_EQ(r.rows()[1].avg_value, 5.0);
}

// ReplayMode::range: one value per region, Kernel "range". On a backend that times each kernel
// (the simulated one, as cupti) it is the span from the first kernel's start to the last one's end,
// the gaps between them included.
TEST(Runner, RangeReplayMeasuresARegionAsTheSpanOfItsKernels) {
  SimulatedBackend backend;
  const auto body = [&](const Config&) {
    backend.launch("before", 100);  // outside the region: neither measured nor in the span
    Annotation a("pair");
    backend.launch("void scale<float>(float*)", 10, 50);
    backend.launch("void shift(float*)", 20, 5);  // starts 5 ns after scale ends
  };
  Settings range = quiet();
  range.replay_mode = ReplayMode::range;
  const auto r = profile_with_backend(Sweep(), range, body, backend);
  const auto& row = r.at("pair", "test__kernel_duration", 0);
  EXPECT_DOUBLE_EQ(row.avg_value, 35.0);  // 10 + 5 + 20
  EXPECT_EQ(row.kernel, "range");
  EXPECT_EQ(r.samples().front().kernel, "range");

  range.ignore_kernel_list = {"scale"};  // the span of the kernels kept
  EXPECT_DOUBLE_EQ(profile_with_backend(Sweep(), range, body, backend).rows()[0].avg_value, 20.0);

  try {  // kernel replay: two kernels need a rule
    profile_with_backend(Sweep(), quiet(), body, backend);
    FAIL() << "expected SweepError";
  } catch (const SweepError& e) {
    EXPECT_NE(cause_message<KernelCountError>(e).find("More than one (total=2)"), std::string::npos);
  }
}

// Nsight Python's order: the measured metrics' rows first, by annotation then config, then the
// derived ones in the same order; the session records which metrics the backend measured.
TEST(Runner, SummaryRowsComeMeasuredFirstThenDerivedAsNsightPython) {
  SimulatedBackend backend;
  Settings s = quiet(2);
  s.derive_metric = [](const MeasuredValues& m, const Config&) {
    return std::vector<DerivedValue>{{"twice", 2 * m.front(), "ns"}};
  };
  const auto r = profile_with_backend(Sweep().axis("n", {1, 2}), s, [&](const Config& c) {
    { Annotation a("a"); backend.launch("ka", 10.0 * c.get<int>("n")); }
    { Annotation b("b"); backend.launch("kb", 100.0 * c.get<int>("n")); }
  }, backend);
  std::vector<std::string> order;
  for (const auto& row : r.rows()) order.push_back(row.annotation + "/" + std::to_string(row.config_index) + "/" + row.metric);
  const std::vector<std::string> expected{
      "a/0/test__kernel_duration", "a/1/test__kernel_duration", "b/0/test__kernel_duration", "b/1/test__kernel_duration",
      "a/0/twice",                 "a/1/twice",                 "b/0/twice",                 "b/1/twice"};
  EXPECT_EQ(order, expected);
  EXPECT_EQ(r.session().metrics, std::vector<std::string>{"test__kernel_duration"});
}

TEST(Runner, SameNameInDifferentRunsIsFine) {
  SimulatedBackend backend;
  auto r = profile_with_backend(Sweep(), quiet(5), [&](const Config&) { Annotation a("k"); backend.launch("k", 3); }, backend);
  EXPECT_EQ(r.rows()[0].stats.count, 5u);
}

TEST(Runner, BodyExceptionKeepsEarlierConfigsAndNamesTheFailingOne) {
  SimulatedBackend backend;
  const auto dir = std::filesystem::temp_directory_path() / "kscope_partial_test";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  Settings s = quiet(2);
  s.output_prefix = (dir / "run_").string();
  try {
    profile_with_backend(Sweep().axis("n", {1, 2, 3}), s, [&](const Config& c) {
      if (c.get<std::int64_t>("n") == 3) throw std::runtime_error("out of memory for n=3");
      Annotation a("k");
      backend.launch("k", 1);
    }, backend);
    FAIL();
  } catch (const SweepError& e) {
    EXPECT_EQ(cause_message<std::runtime_error>(e), "out of memory for n=3");
    EXPECT_NE(std::string(e.what()).find("config 3/3 (n=3) failed in warm-up run 1: out of memory for n=3"),
              std::string::npos) << e.what();
    const Results& partial = e.partial_results();
    ASSERT_EQ(partial.rows().size(), 2u);
    EXPECT_EQ(partial.samples().size(), 4u);
    EXPECT_TRUE(std::filesystem::exists(dir / "run_summary.csv"));
    EXPECT_TRUE(std::filesystem::exists(dir / "run_samples.csv"));
    EXPECT_TRUE(std::filesystem::exists(dir / "run_results.json"));
    EXPECT_NE(std::string(e.what()).find("written to"), std::string::npos);
  }
  EXPECT_FALSE(backend.session_open());
  std::filesystem::remove_all(dir);
}

TEST(Runner, IgnoreFailuresRecordsNaNAndExcludesTheRun) {
  SimulatedBackend backend;
  int call = 0;
  ::testing::internal::CaptureStderr();
  Settings s = quiet(4);
  s.verbosity = Verbosity::info;  // the warning is information; quiet would silence it
  auto r = profile_with_backend(Sweep(), s, [&](const Config&) {
    ++call;
    annotate("flaky", [&] {
      if (call == 3) throw std::runtime_error("transient");
      backend.launch("k", 10.0 * call);
    }, {.ignore_failures = true});
  }, backend);
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("annotation 'flaky' failed in config ((no axes)) and was recorded as NaN (ignore_failures): transient"),
            std::string::npos) << err;
  const auto& row = r.at("flaky", "test__kernel_duration", 0);
  EXPECT_EQ(row.stats.count, 3u);  // runs 2..5 recorded, run 3 failed
  EXPECT_DOUBLE_EQ(row.stats.mean, (20.0 + 40.0 + 50.0) / 3.0);
  std::size_t nan_samples = 0;
  for (const auto& s : r.samples()) nan_samples += std::isnan(s.value);
  EXPECT_EQ(nan_samples, 1u);
}

TEST(Runner, WithoutIgnoreFailuresAnAnnotatedExceptionPropagates) {
  SimulatedBackend backend;
  EXPECT_THROW(profile_with_backend(Sweep(), quiet(), [&](const Config&) {
    annotate("strict", [] { throw std::logic_error("bad"); });
  }, backend), SweepError);
}

TEST(Runner, DeriveMetricAddsPerRunValuesWithUnits) {
  SimulatedBackend backend;
  Settings s = quiet(3);
  s.derive_metric = [](const MeasuredValues& m, const Config& c) {
    const double bytes = static_cast<double>(c.get<std::int64_t>("bytes"));
    return std::vector<DerivedValue>{{"bandwidth", bytes / m["test__kernel_duration"], "GB/s"},
                                     {"double_time", 2 * m.front(), "ns"}};
  };
  auto r = profile_with_backend(Sweep().axis("bytes", {1000}), s, [&](const Config&) {
    Annotation a("copy");
    backend.launch("copy", 100);
  }, backend);
  EXPECT_DOUBLE_EQ(r.at("copy", "bandwidth", 0).avg_value, 10.0);
  EXPECT_EQ(r.at("copy", "bandwidth", 0).unit, "GB/s");
  EXPECT_EQ(r.at("copy", "bandwidth", 0).stats.count, 3u);
  EXPECT_DOUBLE_EQ(r.at("copy", "double_time", 0).avg_value, 200.0);
  EXPECT_EQ(r.samples().size(), 9u);
}

TEST(Runner, DeriveMetricAskingForAnUnknownMetricNamesTheMeasuredOnes) {
  SimulatedBackend backend;
  Settings s = quiet();
  s.derive_metric = [](const MeasuredValues& m, const Config&) {
    return std::vector<DerivedValue>{{"x", m["gpu__time_duration.sum"], "ns"}};
  };
  try {
    profile_with_backend(Sweep(), s, [&](const Config&) { Annotation a("k"); backend.launch("k", 1); }, backend);
    FAIL();
  } catch (const SweepError& e) {
    EXPECT_NE(cause_message<ConfigError>(e).find(
                  "derive_metric asked for metric 'gpu__time_duration.sum', which this backend does not measure; "
                  "measured: 'test__kernel_duration'"),
              std::string::npos);
  }
}

TEST(Runner, NormalizeAgainstDividesAvgValueOnly) {
  SimulatedBackend backend;
  Settings s = quiet(2);
  s.normalize_against = "torch";
  auto r = profile_with_backend(Sweep().axis("n", {1, 2}), s, [&](const Config& c) {
    const double n = static_cast<double>(c.get<std::int64_t>("n"));
    { Annotation a("torch"); backend.launch("mm", 100 * n); }
    { Annotation b("triton"); backend.launch("mm2", 50 * n); }
  }, backend);
  const auto& base = r.at("torch", "test__kernel_duration", 1);
  const auto& other = r.at("triton", "test__kernel_duration", 1);
  EXPECT_DOUBLE_EQ(base.avg_value, 1.0);
  EXPECT_DOUBLE_EQ(other.avg_value, 0.5);
  EXPECT_DOUBLE_EQ(other.normalization_value, 200.0);
  EXPECT_EQ(other.normalized, "torch");
  EXPECT_DOUBLE_EQ(other.stats.mean, 100.0);  // statistics stay in the raw scale
  EXPECT_DOUBLE_EQ(other.geomean, 0.5);
}

// Issue 25: a misspelt baseline fails after the first config (it failed after the whole sweep),
// keeping that config's rows.
TEST(Runner, NormalizeAgainstAnUnknownAnnotationFailsAfterTheFirstConfigKeepingIt) {
  SimulatedBackend backend;
  Settings s = quiet(2);
  s.normalize_against = "torhc";
  int calls = 0;
  try {
    profile_with_backend(Sweep().axis("n", {1, 2, 3}), s, [&](const Config&) {
      ++calls;
      Annotation a("torch");
      backend.launch("k", 1);
    }, backend);
    FAIL();
  } catch (const SweepError& e) {
    EXPECT_EQ(cause_message<ConfigError>(e),
              "Settings::normalize_against names annotation 'torhc', which the body did not open (it opened 'torch'): "
              "each row is divided by that annotation's AvgValue at its config, so a config without it has no rows. "
              "Name one of the annotations the body opens (did you mean 'torch'?)");
    EXPECT_EQ(std::string(e.what()).rfind("config 1/3 (n=1) failed in its 3 runs: ", 0), 0u) << e.what();
    EXPECT_EQ(e.partial_results().rows().size(), 1u);
  }
  EXPECT_EQ(calls, 3);  // one warm-up and two runs of the first config
}

// Issue 25: a body that opens no annotation measures nothing; that is said after the first config
// (it returned an empty table and no word after the whole sweep).
TEST(Runner, ABodyWithoutAnnotationFailsAfterTheFirstConfigNamingTheFix) {
  SimulatedBackend backend;
  int calls = 0;
  try {
    profile_with_backend(Sweep().axis("n", {1, 2, 3}), quiet(2), [&](const Config&) {
      ++calls;
      backend.launch("k", 1);  // measured by nobody: outside any region
    }, backend);
    FAIL();
  } catch (const SweepError& e) {
    EXPECT_EQ(cause_message<KernelCountError>(e),
              "No kernels were profiled: the body opened no annotation in any of them, so nothing was measured. "
              "Mark the code to measure with kscope::Annotation a(\"name\"); at the top of the scope that launches "
              "its kernels (or kscope::annotate(\"name\", fn))");
    EXPECT_EQ(std::string(e.what()).rfind("config 1/3 (n=1) failed in its 3 runs: No kernels were profiled: the body "
                                          "opened no annotation", 0),
              0u)
        << e.what();
  }
  EXPECT_EQ(calls, 3);
}

// Issue 25: a config given twice was measured twice and then broke compare (two rows of one name).
TEST(Runner, ARepeatedConfigIsRefusedNamingIt) {
  SimulatedBackend backend;
  const auto refused = [&](const Sweep& sweep) {
    return error_of([&] { profile_with_backend(sweep, quiet(1), [](const Config&) {}, backend); });
  };
  EXPECT_EQ(refused(Sweep().axis("n", {1, 2, 1})),
            "config (n=1) is given twice, as entries 1 and 3 of the axis 'n': each config is measured once; remove "
            "the repeat");
  EXPECT_EQ(refused(Sweep().zip({"m", "n"}, {{1, 2}, {2, 1}, {2, 1}})),
            "config (m=2, n=1) is given twice, as entries 2 and 3 of the zipped axes: each config is measured once; "
            "remove the repeat");
  EXPECT_EQ(refused(Sweep().axis("x", {0.5, 0.25}).axis("x2", {1.0, 1.0})),
            "config (x2=1) is given twice, as entries 1 and 2 of the axis 'x2': each config is measured once; remove "
            "the repeat");
  EXPECT_EQ(backend.session_count(), 0u);  // refused before anything ran
}

TEST(Runner, GeomeanOverConfigs) {
  SimulatedBackend backend;
  auto r = profile_with_backend(Sweep().axis("n", {1, 4}), quiet(1), [&](const Config& c) {
    Annotation a("k");
    backend.launch("k", static_cast<double>(c.get<std::int64_t>("n")));
  }, backend);
  EXPECT_DOUBLE_EQ(r.rows()[0].geomean, 2.0);
  EXPECT_DOUBLE_EQ(r.rows()[1].geomean, 2.0);
}

TEST(Runner, ObservedClocksAreAveragedAroundEachRun) {
  SimulatedBackend backend;
  backend.set_clock_readings({{1900, 3200}, {1700, 3200}});
  auto r = profile_with_backend(Sweep(), quiet(2), [&](const Config&) { Annotation a("k"); backend.launch("k", 1); }, backend);
  EXPECT_DOUBLE_EQ(r.rows()[0].observed_sm_clock_mhz, 1800.0);
  EXPECT_DOUBLE_EQ(r.samples()[0].memory_clock_mhz, 3200.0);
}

TEST(Runner, BadSettingsAndSweepsFailBeforeAnythingRuns) {
  SimulatedBackend backend;
  int calls = 0;
  auto body = [&](const Config&) { ++calls; };
  Settings s = quiet();
  s.runs = 0;
  EXPECT_THROW(profile_with_backend(Sweep(), s, body, backend), ConfigError);
  EXPECT_THROW(profile_with_backend(Sweep().axis("x", {1, 2.0}), quiet(), body, backend), ConfigError);
  s = quiet();
  s.ignore_kernel_list = {""};
  EXPECT_THROW(profile_with_backend(Sweep(), s, body, backend), ConfigError);
  EXPECT_EQ(calls, 0);
  EXPECT_EQ(backend.session_count(), 0u);
}

// A field's own check is its row of the settings table (core/model/settings_table.cpp); validate runs every row's.
TEST(Settings, EachFieldsOwnCheckNamesItAndTheFix) {
  const std::vector<std::pair<std::function<void(Settings&)>, std::string>> bad_fields{
      {[](Settings& s) { s.runs = 0; }, "runs is 0; at least one recorded run per config is needed"},
      {[](Settings& s) { s.warmup_runs = kMaxRunsPerConfig + 1; }, "warmup_runs is 1000000001; at most 1000000000"},
      {[](Settings& s) {
         s.sampling = Sampling::adaptive;
         s.adaptive.max_runs = kMaxRunsPerConfig + 1;
       }, "adaptive.max_runs is 1000000001; at most"},
      {[](Settings& s) { s.ignore_kernel_list = {"k", ""}; }, "ignore_kernel_list contains an empty kernel name"},
      {[](Settings& s) { s.stable_rsd_pct = 0; }, "stable_rsd_pct must be a positive percentage"},
      {[](Settings& s) { s.bound_thresholds.compute_pct = 120; }, "compute_pct is 120: give a percentage of the roof"},
      {[](Settings& s) { s.shard = Shard{2, 2}; }, "shard is 2 of 2: give an index from 0 to count - 1"},
      {[](Settings& s) { s.fsync_interval_s = -1; }, "fsync_interval_s must be 0 (flush after every config)"},
  };
  for (const auto& [spoil, message] : bad_fields) {
    Settings s;
    spoil(s);
    const std::string error = error_of<ConfigError>([&] { s.validate(); });
    EXPECT_NE(error.find(message), std::string::npos) << error;
  }
}

// Python binds each field from the table: a field of a type Python has needs its member there.
TEST(Settings, EachFieldWithAPythonTypeHasItsMemberToBind) {
  for (const auto& f : detail::settings_field_infos())
    EXPECT_EQ(f.python_type.empty(), std::holds_alternative<std::monostate>(f.member)) << f.name;
  const auto member_of = [](const std::string& name) {
    for (const auto& f : detail::settings_field_infos())
      if (f.name == name) return f.member;
    return detail::SettingsMember{};
  };
  EXPECT_EQ(std::get<std::size_t Settings::*>(member_of("runs")), &Settings::runs);
  EXPECT_EQ(std::get<double Settings::*>(member_of("thermal_wait_c")), &Settings::thermal_wait_c);
  EXPECT_EQ(std::get<std::optional<Shard> Settings::*>(member_of("shard")), &Settings::shard);
}

TEST(Runner, NestedProfileCallsAreRefused) {
  SimulatedBackend outer, inner;
  try {
    profile_with_backend(Sweep(), quiet(), [&](const Config&) {
      profile_with_backend(Sweep(), quiet(), [](const Config&) {}, inner);
    }, outer);
    FAIL();
  } catch (const SweepError& e) {
    EXPECT_NE(cause_message<ConfigError>(e).find("profiling sessions cannot be nested"), std::string::npos);
  }
}

TEST(Runner, AnnotationsOutsideProfilingDoNothing) {
  Annotation a("free");
  a.mark_failed("ignored");
  int ran = 0;
  annotate("free_callable", [&] { ++ran; });
  EXPECT_EQ(ran, 1);
}

TEST(Runner, RegionsAreProcessWideSoWorkerThreadsCount) {
  SimulatedBackend backend;
  auto r = profile_with_backend(Sweep(), quiet(2), [&](const Config&) {
    Annotation a("threaded");
    std::thread worker([&] { backend.launch("from_worker", 7); });
    worker.join();
  }, backend);
  EXPECT_DOUBLE_EQ(r.rows()[0].avg_value, 7.0);
}

TEST(Runner, RepeatedSessionsInOneProcess) {
  SimulatedBackend backend;
  for (int i = 0; i < 3; ++i) {
    auto r = profile_with_backend(Sweep(), quiet(2), [&](const Config&) { Annotation a("k"); backend.launch("k", i + 1.0); }, backend);
    EXPECT_DOUBLE_EQ(r.rows()[0].avg_value, i + 1.0);
  }
  EXPECT_EQ(backend.session_count(), 3u);
}

TEST(Runner, MultiPassBackendsReRunTheBodyAndFlushBeforeEveryPass) {
  SimulatedBackend backend;
  backend.set_passes(3);
  int calls = 0;
  auto r = profile_with_backend(Sweep(), quiet(2), [&](const Config&) {
    ++calls;
    Annotation a("k");
    backend.launch("k", 4);
  }, backend);
  EXPECT_EQ(calls, 3 * (1 + 2));
  EXPECT_EQ(backend.flush_count(), 9u);
  EXPECT_EQ(r.rows()[0].stats.count, 2u);
}

TEST(Runner, ReplayPassesMustOpenTheSameRegions) {
  SimulatedBackend backend;
  backend.set_passes(2);
  int calls = 0;
  try {
    profile_with_backend(Sweep(), quiet(1), [&](const Config&) {
      Annotation a(++calls == 1 ? "first" : "other");
      backend.launch("k", 1);
    }, backend);
    FAIL();
  } catch (const SweepError& e) {
    EXPECT_NE(cause_message<AnnotationError>(e).find("replay pass 2 opened other regions ('other') than the first pass ('first')"),
              std::string::npos);
  }
}

// --- Batched collection (the cupti backend hands runs back 64 at a time) -------------------------

namespace {

// A body whose kernel takes 10, 20, 30 ... ns, one more step per call.
std::function<void(const Config&)> growing_kernel(SimulatedBackend& backend, int& calls) {
  return [&backend, &calls](const Config&) {
    ++calls;
    Annotation a("k");
    backend.launch("k", 10.0 * calls);
  };
}

std::vector<double> sample_values(const Results& r) {
  std::vector<double> values;
  for (const auto& s : r.samples()) values.push_back(s.value);
  return values;
}

// A sweep of 1 warm-up and 6 runs on a backend that hands runs back 16 at a time; `body` gets the
// 1-based call number. The SweepError it ends with; a test failure and nullopt if it ends without.
std::optional<SweepError> batched_sweep_error(SimulatedBackend& backend, const std::function<void(int)>& body) {
  backend.set_max_batch_runs(16);
  int calls = 0;
  try {
    profile_with_backend(Sweep(), quiet(6), [&](const Config&) { body(++calls); }, backend);
  } catch (const SweepError& e) {
    return e;
  }
  ADD_FAILURE() << "the sweep ended without a SweepError";
  return std::nullopt;
}

}  // namespace

TEST(Batching, RecordsTheSameSamplesAsCollectingEveryRun) {
  const auto sweep = Sweep().axis("n", {1, 2});
  SimulatedBackend per_run, batched;
  batched.set_max_batch_runs(8);
  int calls_per_run = 0, calls_batched = 0;
  const Results a = profile_with_backend(sweep, quiet(20), growing_kernel(per_run, calls_per_run), per_run);
  const Results b = profile_with_backend(sweep, quiet(20), growing_kernel(batched, calls_batched), batched);
  EXPECT_EQ(sample_values(a), sample_values(b));
  EXPECT_EQ(b.samples().size(), 2u * 20u);
  EXPECT_DOUBLE_EQ(b.at("k", "test__kernel_duration", 1).stats.mean, a.at("k", "test__kernel_duration", 1).stats.mean);
  // 21 runs per config (1 warm-up): batches of 8, 8, and 5 (the config's last run collects at once).
  EXPECT_EQ(per_run.collections(), 2u * 21u);
  EXPECT_EQ(batched.collections(), 2u * 3u);
}

TEST(Batching, ABodyFailureKeepsTheRunsEndedBeforeItInTheBatch) {
  SimulatedBackend backend;
  const auto e = batched_sweep_error(backend, [&](int call) {
    if (call == 5) throw std::runtime_error("device lost");
    Annotation a("k");
    backend.launch("k", 10.0 * call);
  });
  ASSERT_TRUE(e);
  EXPECT_NE(std::string(e->what()).find("failed in run 4: device lost"), std::string::npos) << e->what();
  // The warm-up and runs 1-3 ended before the failure and were never collected until it.
  EXPECT_EQ(sample_values(e->partial_results()), (std::vector<double>{20, 30, 40}));
  EXPECT_FALSE(backend.session_open());
}

TEST(Batching, AnAttributionErrorNamesItsRunAndKeepsTheEarlierOnes) {
  SimulatedBackend backend;
  const auto e = batched_sweep_error(backend, [&](int call) {
    Annotation a("k");
    if (call != 4) backend.launch("k", 10.0 * call);
  });
  ASSERT_TRUE(e);
  EXPECT_NE(std::string(e->what()).find("failed in run 3: No kernels were profiled in annotation 'k' in this run"), std::string::npos)
      << e->what();
  EXPECT_EQ(sample_values(e->partial_results()), (std::vector<double>{20, 30}));
}

TEST(Batching, AdaptiveSamplingStopsWhereItWouldWithoutBatches) {
  // Runs past the stopping point are measured speculatively and dropped, so the recorded series
  // (and its convergence) is the one collecting every run would give.
  Settings s = quiet();
  s.sampling = Sampling::adaptive;
  s.adaptive.target_pct = 1.0;
  const auto noisy = [](SimulatedBackend& backend, std::mt19937& rng) {
    return [&backend, &rng](const Config&) {
      std::normal_distribution<double> noise(5000, 150);
      Annotation a("k");
      backend.launch("k", noise(rng));
    };
  };
  SimulatedBackend per_run, batched;
  batched.set_max_batch_runs(64);
  std::mt19937 rng_a(7), rng_b(7);
  const Results a = profile_with_backend(Sweep(), s, noisy(per_run, rng_a), per_run);
  const Results b = profile_with_backend(Sweep(), s, noisy(batched, rng_b), batched);
  EXPECT_EQ(b.rows()[0].converged, std::optional<bool>(true));
  EXPECT_EQ(b.rows()[0].stats.count, a.rows()[0].stats.count);
  EXPECT_EQ(sample_values(a), sample_values(b));
  EXPECT_LT(batched.collections(), per_run.collections());
}

// --- Pass-major replay (the counter backend replays a batch of runs pass by pass) -----------------

TEST(PassMajor, EveryRunOfABatchRunsPassOneBeforeAnyRunsPassTwo) {
  SimulatedBackend backend;
  backend.set_passes(2);
  backend.set_max_batch_runs(16);
  int calls = 0;
  const Results r = profile_with_backend(Sweep(), quiet(2), growing_kernel(backend, calls), backend);
  // One batch of 3 runs (a warm-up and 2): calls 1-3 are pass 1, calls 4-6 pass 2, whose launches
  // stand for the run. Run-major replay would have recorded 40 and 60.
  EXPECT_EQ(calls, 6);
  EXPECT_EQ(backend.batch_sizes(), std::vector<std::size_t>{3});
  EXPECT_EQ(sample_values(r), (std::vector<double>{50, 60}));
}

TEST(PassMajor, WarmupsGetEveryPassAndAreNotRecorded) {
  SimulatedBackend backend;
  backend.set_passes(2);
  backend.set_max_batch_runs(16);
  Settings s = quiet(2);
  s.warmup_runs = 2;
  int calls = 0;
  const Results r = profile_with_backend(Sweep(), s, growing_kernel(backend, calls), backend);
  EXPECT_EQ(calls, 2 * 4);
  EXPECT_EQ(sample_values(r), (std::vector<double>{70, 80}));  // pass 2 of the batch's runs 3 and 4
}

TEST(PassMajor, AFailureInPassOneKeepsTheRunsBeforeItWithAllTheirPasses) {
  SimulatedBackend backend;
  backend.set_passes(3);
  int last_call = 0;
  const auto e = batched_sweep_error(backend, [&](int call) {
    last_call = call;
    if (call == 5) throw std::runtime_error("device lost");
    Annotation a("k");
    backend.launch("k", 10.0 * call);
  });
  ASSERT_TRUE(e);
  EXPECT_NE(std::string(e->what()).find("failed in run 4: device lost"), std::string::npos) << e->what();
  // Pass 1: calls 1-5 (the warm-up, runs 1-3, and run 4 that threw); passes 2 and 3 of the four
  // runs before it: calls 6-9 and 10-13, the last of which stand for runs 1-3.
  EXPECT_EQ(last_call, 13);
  EXPECT_EQ(sample_values(e->partial_results()), (std::vector<double>{110, 120, 130}));
  EXPECT_FALSE(backend.session_open());
}

TEST(PassMajor, AFailureInALaterPassDropsItsBatchAndSaysSo) {
  SimulatedBackend backend;
  backend.set_passes(3);
  backend.set_max_batch_runs(4);
  int calls = 0;
  try {
    // Batch 1: the warm-up and runs 1-3 (calls 1-12); batch 2: runs 4-6, pass 1 (calls 13-15) and
    // pass 2 (calls 16-18), where run 5 throws.
    profile_with_backend(Sweep(), quiet(6), [&](const Config&) {
      if (++calls == 17) throw std::runtime_error("lost in pass 2");
      Annotation a("k");
      backend.launch("k", 10.0 * calls);
    }, backend);
    FAIL() << "the sweep ended without a SweepError";
  } catch (const SweepError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("failed in replay pass 2 of run 5 (the 3 runs of its batch are dropped: each needs every pass)"),
              std::string::npos) << m;
    EXPECT_NE(m.find("lost in pass 2"), std::string::npos) << m;
    EXPECT_EQ(sample_values(e.partial_results()), (std::vector<double>{100, 110, 120}));
  }
  EXPECT_EQ(calls, 17);
  EXPECT_EQ(backend.batch_sizes(), std::vector<std::size_t>{4});
}

TEST(PassMajor, ABackendWhoseBatchFillsUpEndsItAndTheNextBatchTakesTheRest) {
  SimulatedBackend backend;
  backend.set_passes(2);
  backend.set_max_batch_runs(16);
  backend.set_batch_launches(7);  // two launches per run: three runs fit, a fourth would not
  int calls = 0;
  const Results r = profile_with_backend(Sweep(), quiet(6), [&](const Config&) {
    ++calls;
    backend.launch("setup", 1);  // outside every region: it fills the batch all the same
    Annotation a("k");
    backend.launch("k", 10.0 * calls);
  }, backend);
  EXPECT_EQ(backend.batch_sizes(), (std::vector<std::size_t>{3, 3, 1}));
  EXPECT_EQ(calls, 2 * 7);
  EXPECT_EQ(r.rows()[0].stats.count, 6u);
}

namespace {

// Whether `values` meet the adaptive target as the sampling plan judges it (CI half-width).
bool meets_target(const std::vector<double>& values, const Settings& s) {
  const SampleStatistics st = summarize(values, s.stable_rsd_pct);
  return st.count >= 2 && 100.0 * (st.ci95_upper - st.mean) / std::fabs(st.mean) < s.adaptive.target_pct;
}

}  // namespace

TEST(PassMajor, AdaptiveSamplingDecidesBetweenDoublingBatchesAndConvergedStaysTruthful) {
  Settings s = quiet();
  s.sampling = Sampling::adaptive;
  s.adaptive.target_pct = 1.0;
  SimulatedBackend backend;
  backend.set_passes(3);
  backend.set_max_batch_runs(512);
  std::mt19937 rng(7);
  int calls = 0;
  const Results r = profile_with_backend(Sweep(), s, [&](const Config&) {
    ++calls;
    std::normal_distribution<double> noise(5000, 150);
    Annotation a("k");
    backend.launch("k", noise(rng));
  }, backend);
  ASSERT_EQ(r.rows()[0].converged, std::optional<bool>(true));
  const std::vector<double> values = sample_values(r);
  // Converged where the recorded series first met the target, the runs measured past it dropped.
  ASSERT_GE(values.size(), s.adaptive.min_runs);
  EXPECT_TRUE(meets_target(values, s));
  for (std::size_t n = s.adaptive.min_runs; n < values.size(); ++n)
    EXPECT_FALSE(meets_target(std::vector<double>(values.begin(), values.begin() + n), s)) << n << " runs";
  // Batches of the warm-up and min_runs, then doubling; the last holds the stopping run.
  const std::vector<std::size_t> doubling{11, 11, 22, 44, 88, 176};
  const auto& sizes = backend.batch_sizes();
  ASSERT_LE(sizes.size(), doubling.size());
  EXPECT_TRUE(std::equal(sizes.begin(), sizes.end(), doubling.begin()));
  std::size_t before_last = 0;
  for (std::size_t i = 0; i + 1 < sizes.size(); ++i) before_last += sizes[i];
  EXPECT_LT(before_last, 1 + values.size());
  EXPECT_GE(before_last + sizes.back(), 1 + values.size());
  EXPECT_EQ(calls, 3 * static_cast<int>(before_last + sizes.back()));
}

TEST(PassMajor, AdaptiveSamplingOutOfRunsIsNotConvergedAndKeepsExactlyMaxRuns) {
  Settings s = quiet();
  s.sampling = Sampling::adaptive;
  s.adaptive.max_runs = 30;
  SimulatedBackend backend;
  backend.set_passes(2);
  backend.set_max_batch_runs(512);
  int calls = 0;
  const Results r = profile_with_backend(Sweep(), s, [&](const Config&) {
    ++calls;
    Annotation a("k");
    backend.launch("k", calls % 2 ? 1000 : 9000);  // never within 1%
  }, backend);
  EXPECT_EQ(r.rows()[0].converged, std::optional<bool>(false));
  EXPECT_EQ(r.rows()[0].stats.count, 30u);
  EXPECT_EQ(backend.batch_sizes(), (std::vector<std::size_t>{11, 11, 9}));  // the last one: what max_runs leaves
  EXPECT_EQ(calls, 2 * 31);
}

// --- What the engine's shape guarantees ----------------------------------------------------------

TEST(Runner, AnErrorWhileARegionClosesIsASweepErrorNamingTheRegion) {
  SimulatedBackend backend;
  int calls = 0;
  try {
    profile_with_backend(Sweep().axis("n", {1, 2}), quiet(3), [&](const Config& c) {
      Annotation a("closing");
      backend.launch("k", 1);
      if (c.index() == 1 && ++calls == 2) backend.fail_next_region_end("cudaEventRecord failed: device lost");
    }, backend);
    FAIL() << "expected SweepError";
  } catch (const SweepError& e) {
    EXPECT_NE(std::string(e.what()).find("config 2/2 (n=2) failed in run 1: annotation 'closing' could not be "
                                         "closed: cudaEventRecord failed: device lost"),
              std::string::npos)
        << e.what();
    EXPECT_EQ(e.partial_results().rows().size(), 1u);  // config 1 is kept
  }
  EXPECT_FALSE(backend.session_open());
}

TEST(Runner, QuietMeansQuiet) {
  SimulatedBackend backend;
  int call = 0;
  ::testing::internal::CaptureStderr();
  profile_with_backend(Sweep().axis("n", {1, 2}), quiet(3), [&](const Config&) {
    annotate("flaky", [&] {
      if (++call == 2) throw std::runtime_error("transient");
      backend.launch("k", 1);
    }, {.ignore_failures = true});
  }, backend);
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");
}

TEST(Runner, AnAnnotationLeftOpenWhenTheBodyReturnsIsAnError) {
  SimulatedBackend backend;
  std::optional<Annotation> leaked;
  try {
    profile_with_backend(Sweep(), quiet(), [&](const Config&) {
      leaked.emplace("left_open");
      backend.launch("k", 1);
    }, backend);
    FAIL() << "expected SweepError";
  } catch (const SweepError& e) {
    EXPECT_NE(cause_message<AnnotationError>(e).find("annotation 'left_open' was still open when the body returned"),
              std::string::npos)
        << e.what();
  }
  leaked.reset();  // closing it outside profiling does nothing
}

TEST(Runner, AnAnnotationLeftOpenInAnEarlierSessionClosesNothingLater) {
  SimulatedBackend backend;
  std::optional<Annotation> leaked;
  EXPECT_THROW(profile_with_backend(Sweep(), quiet(), [&](const Config&) {
    if (!leaked) leaked.emplace("left_open");
    backend.launch("k", 1);
  }, backend), SweepError);
  // Destroyed while the next session's region with the same index is open: that region stays open.
  auto r = profile_with_backend(Sweep(), quiet(1), [&](const Config&) {
    Annotation a("k");
    if (leaked) {
      leaked->mark_failed("not this run's");
      leaked.reset();
    }
    backend.launch("k", 7);
  }, backend);
  EXPECT_DOUBLE_EQ(r.at("k", "test__kernel_duration", 0).avg_value, 7.0);
  EXPECT_EQ(r.at("k", "test__kernel_duration", 0).stats.count, 1u);
}

TEST(Runner, ASecondThreadsProfileCallIsRefusedWhileOneRuns) {
  SimulatedBackend first, second;
  std::promise<void> inside;
  std::promise<std::string> refused;
  std::thread other([&] {
    inside.get_future().wait();
    try {
      profile_with_backend(Sweep(), quiet(), [&](const Config&) { Annotation a("k"); second.launch("k", 1); }, second);
      refused.set_value("no error");
    } catch (const ConfigError& e) {
      refused.set_value(e.what());
    }
  });
  bool signalled = false;
  auto answer = refused.get_future();
  std::string message;
  profile_with_backend(Sweep(), quiet(1), [&](const Config&) {
    Annotation a("k");
    first.launch("k", 1);
    if (!std::exchange(signalled, true)) {
      inside.set_value();
      message = answer.get();  // the other thread tried while this session runs
    }
  }, first);
  other.join();
  EXPECT_NE(message.find("profiling sessions cannot be nested or run concurrently"), std::string::npos) << message;
  // Once the first session ended, the second thread's call works.
  std::thread later([&] {
    profile_with_backend(Sweep(), quiet(), [&](const Config&) { Annotation a("k"); second.launch("k", 1); }, second);
  });
  later.join();
  EXPECT_EQ(second.session_count(), 1u);
}

// Issue 25: a callable of the caller's that throws is named in the error; its own exception stays
// the cause.
TEST(Runner, AThrowingDeriveMetricOrCombineRuleIsNamed) {
  SimulatedBackend backend;
  Settings derive = quiet(2);
  derive.derive_metric = [](const MeasuredValues&, const Config&) -> std::vector<DerivedValue> {
    throw std::domain_error("division by zero");
  };
  Settings combine = quiet(2);
  combine.combine_kernel_metrics = [](double, double) -> double { throw std::domain_error("no rule"); };
  for (const auto& [settings, expected] :
       {std::pair{derive, "config 1/1 ((no axes)) failed in run 1, in Settings::derive_metric: division by zero\n"},
        std::pair{combine,
                  "config 1/1 ((no axes)) failed in warm-up run 1, in Settings::combine_kernel_metrics: no rule\n"}}) {
    try {
      profile_with_backend(Sweep(), settings, [&](const Config&) {
        Annotation a("k");
        backend.launch("a", 1);
        if (settings.combine_kernel_metrics) backend.launch("b", 2);
      }, backend);
      FAIL();
    } catch (const SweepError& e) {
      EXPECT_EQ(std::string(e.what()).substr(0, std::string(e.what()).find('\n') + 1), expected);
      EXPECT_EQ(cause_message<std::domain_error>(e), settings.derive_metric ? "division by zero" : "no rule");
    }
  }
}

// Issue 25: a derived unit that changes between configs, and a baseline of 0, are said.
TEST(Runner, AChangingDerivedUnitAndAZeroBaselineAreWarned) {
  SimulatedBackend backend;
  Settings s = quiet(2);
  s.verbosity = Verbosity::info;
  s.normalize_against = "base";
  s.derive_metric = [](const MeasuredValues& m, const Config& c) {
    const bool big = c.get<std::int64_t>("n") > 1;
    return std::vector<DerivedValue>{{"bandwidth", big ? m.front() / 1000 : m.front(), big ? "GB/s" : "MB/s"}};
  };
  ::testing::internal::CaptureStderr();
  const Results r = profile_with_backend(Sweep().axis("n", {1, 2}), s, [&](const Config& c) {
    { Annotation a("base"); backend.launch("k", c.get<std::int64_t>("n") == 1 ? 0.0 : 5.0); }
    { Annotation b("other"); backend.launch("k2", 10); }
  }, backend);
  const std::string log = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(log.find("Settings::derive_metric returned the unit 'GB/s' for 'bandwidth' of annotation 'base' at config "
                     "(n=2), 'MB/s' before: the rows of one metric are read, plotted and compared on one scale"),
            std::string::npos)
      << log;
  EXPECT_NE(log.find("Settings::normalize_against 'base' has an AvgValue of 0 for bandwidth at config (n=1); "
                     "test__kernel_duration at config (n=1), so the rows divided by it there are infinite or NaN"),
            std::string::npos)
      << log;
  EXPECT_TRUE(std::isinf(r.at("other", "test__kernel_duration", 0).avg_value));
}

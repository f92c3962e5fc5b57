// Clock locking, throttle flags, thermal pauses and adaptive sampling through the whole engine,
// against the simulated backend's fake device.
#include <gtest/gtest.h>

#include <cmath>
#include <csignal>
#include <random>
#include <thread>

#include "core/control/throttle.hpp"
#include "kscope/annotation.hpp"
#include "kscope/detail/enum_names.hpp"
#include "kscope/errors.hpp"
#include "kscope/profile.hpp"
#include "kscope/testing.hpp"

using namespace kscope;
using kscope::testing::FakeDevice;
using kscope::testing::SimulatedBackend;

namespace {

Settings quiet(std::size_t runs = 3) {
  Settings s;
  s.runs = runs;
  s.verbosity = Verbosity::quiet;
  s.thermal_mode = ThermalMode::off;
  return s;
}

auto one_kernel(SimulatedBackend& b, double ns = 100) {
  return [&b, ns](const Config&) {
    Annotation a("k");
    b.launch("k", ns);
  };
}

}  // namespace

TEST(ClockControl, BaseLocksForTheSessionAndRestores) {
  SimulatedBackend backend;
  Settings s = quiet();
  s.apply(Preset::strict);
  bool locked_while_running = false;
  auto r = profile_with_backend(Sweep(), s, [&](const Config&) {
    locked_while_running = backend.device().clocks_locked();
    Annotation a("k");
    backend.launch("k", 1);
  }, backend);
  EXPECT_TRUE(locked_while_running);
  EXPECT_FALSE(backend.device().clocks_locked());
  EXPECT_EQ(backend.device().restore_count(), 1u);
  EXPECT_EQ(r.session().clock_control, ClockControl::base);
  EXPECT_EQ(r.session().mode(), "strict");
  EXPECT_DOUBLE_EQ(r.session().locked_sm_clock_mhz, FakeDevice::kBaseClocks.sm_mhz);
}

TEST(ClockControl, RestoredWhenTheBodyThrows) {
  SimulatedBackend backend;
  Settings s = quiet();
  s.clock_control = ClockControl::base;
  EXPECT_THROW(profile_with_backend(Sweep(), s, [](const Config&) { throw std::runtime_error("boom"); }, backend),
               SweepError);
  EXPECT_FALSE(backend.device().clocks_locked());
  EXPECT_EQ(backend.device().restore_count(), 1u);
}

// SIGINT is the sweep's (stop after the run in progress: tests/cpu/test_durable.cpp); a second
// SIGINT, and SIGTERM, restore the clocks at once and then reach the application's handler.
TEST(ClockControl, RestoredAtOnceOnASecondSigintOrSigterm) {
  for (const int signal : {SIGINT, SIGTERM}) {
    SimulatedBackend backend;
    Settings s = quiet();
    s.clock_control = ClockControl::base;
    static volatile std::sig_atomic_t app_saw_signal = 0;
    app_saw_signal = 0;
    auto previous = std::signal(signal, [](int) { app_saw_signal = 1; });
    bool restored_by_signal = false;
    const auto run = [&] {
      profile_with_backend(Sweep(), s, [&](const Config&) {
        if (backend.device().clocks_locked()) {
          if (signal == SIGINT) std::raise(SIGINT);  // the first one asks the sweep to stop
          std::raise(signal);
          restored_by_signal = !backend.device().clocks_locked();
        }
        Annotation a("k");
        backend.launch("k", 1);
      }, backend);
    };
    if (signal == SIGINT)
      EXPECT_THROW(run(), SweepInterrupted);
    else
      run();
    std::signal(signal, previous);
    EXPECT_TRUE(restored_by_signal) << signal;
    EXPECT_EQ(app_saw_signal, 1) << signal;
    EXPECT_EQ(backend.device().restore_count(), 1u) << signal;  // not restored twice
  }
}

TEST(ClockControl, PermissionDeniedIsRaisedBeforeAnyRun) {
  SimulatedBackend backend;
  backend.device().deny_clock_lock("locking GPU clocks needs root");
  Settings s = quiet();
  s.clock_control = ClockControl::base;
  int calls = 0;
  try {
    profile_with_backend(Sweep(), s, [&](const Config&) { ++calls; }, backend);
    FAIL();
  } catch (const BackendError& e) {
    EXPECT_STREQ(e.what(), "locking GPU clocks needs root");
  }
  EXPECT_EQ(calls, 0);
  EXPECT_FALSE(backend.session_open());
}

TEST(Presets, SetCacheAndClockAndNameTheMode) {
  Settings s;
  EXPECT_EQ(mode_name(s.cache_control, s.clock_control), "default");
  s.apply(Preset::continuous);
  EXPECT_EQ(s.cache_control, CacheControl::none);
  EXPECT_EQ(s.clock_control, ClockControl::none);
  EXPECT_EQ(mode_name(s.cache_control, s.clock_control), "continuous");
  s.apply(Preset::strict);
  EXPECT_EQ(mode_name(s.cache_control, s.clock_control), "strict");
  s.cache_control = CacheControl::none;
  EXPECT_EQ(mode_name(s.cache_control, s.clock_control), "custom");
}

// Each enumeration's names are one table: to_string reads it, and a value the table lacks (one added
// to the enumeration but not to its table) is a kscope bug, never printed as another value's name.
TEST(Presets, EnumerationNamesComeFromOneTableAndAnUnnamedValueIsABug) {
  EXPECT_EQ(to_string(CacheControl::none), "none");
  EXPECT_EQ(to_string(ClockControl::base), "base");
  EXPECT_EQ(to_string(ReplayMode::range), "range");
  EXPECT_EQ(detail::enum_name(ThermalMode::automatic), "automatic");
  EXPECT_THROW(to_string(static_cast<ClockControl>(2)), InternalError);
  EXPECT_THROW(to_string(static_cast<CacheControl>(2)), InternalError);
  EXPECT_THROW(detail::enum_name(static_cast<ThermalMode>(3)), InternalError);
  EXPECT_THROW(Settings().apply(static_cast<Preset>(3)), InternalError);
  EXPECT_EQ(mode_name(CacheControl::all, static_cast<ClockControl>(2)), "custom");
}

TEST(Throttle, ReasonsAndLowBusyClocks) {
  using kscope::detail::is_throttled;
  const ClockReading ok{1980, 3201, 0x0};
  EXPECT_FALSE(is_throttled(ok, ok, 1980));
  EXPECT_TRUE(is_throttled(ok, {1980, 3201, 0x20}, 1980));          // software thermal slowdown
  EXPECT_TRUE(is_throttled({1200, 3201, 0x0}, ok, 1980));           // busy at 61% of the expected clock
  EXPECT_FALSE(is_throttled({345, 3201, 0x1}, ok, 1980));           // idle: a low clock is expected
  EXPECT_FALSE(is_throttled({345, 3201, std::nullopt}, ok, 1980));  // no reasons: cannot tell
  EXPECT_FALSE(is_throttled({1500, 3201, 0x0}, ok, 1980));          // 76%: within the threshold
}

TEST(Throttle, FlaggedCountedAndKeptOrExcluded) {
  // Each run reads the clocks before and after: with these four readings cycled, the warm-up and
  // recorded runs 2 and 4 see a power-cap reason, and those runs are the slow ones.
  const std::vector<ClockReading> readings{{1980, 3201, 0x4}, {1980, 3201, 0}, {1980, 3201, 0}, {1980, 3201, 0}};
  const std::vector<double> durations{50, 10, 50, 10, 50};  // warm-up, then 4 recorded runs
  auto measure = [&](ThrottledRuns rule) {
    SimulatedBackend backend;
    backend.set_clock_readings(readings);
    std::size_t call = 0;
    Settings s = quiet(4);
    s.throttled_runs = rule;
    return profile_with_backend(Sweep(), s, [&](const Config&) {
      Annotation a("k");
      backend.launch("k", durations[call++]);
    }, backend);
  };
  const Results kept = measure(ThrottledRuns::keep);
  EXPECT_EQ(kept.rows()[0].throttled_runs, 2u);
  EXPECT_EQ(kept.rows()[0].stats.count, 4u);
  EXPECT_DOUBLE_EQ(kept.rows()[0].stats.mean, 30.0);
  std::size_t flagged = 0;
  for (const auto& row : kept.samples()) flagged += row.throttled;
  EXPECT_EQ(flagged, 2u);
  EXPECT_TRUE(kept.samples()[1].throttled);

  const Results excluded = measure(ThrottledRuns::exclude);
  EXPECT_EQ(excluded.rows()[0].throttled_runs, 2u);
  EXPECT_EQ(excluded.rows()[0].stats.count, 2u);
  EXPECT_DOUBLE_EQ(excluded.rows()[0].stats.mean, 10.0);
  EXPECT_EQ(excluded.samples().size(), 4u);  // the raw samples keep every run
}

TEST(Thermal, PausesAreCountedPerConfigAndInTheSession) {
  SimulatedBackend backend;
  // Hot before the first run of config 2, then cool again.
  backend.device().set_thermal_margins({30, 30, 30, 30, 8, 25, 30});
  Settings s = quiet(1);
  s.warmup_runs = 1;
  s.thermal_mode = ThermalMode::manual;
  // Runs longer than the guard's check interval, so that it reads the margin before every run.
  auto r = profile_with_backend(Sweep().axis("n", {1, 2, 3}), s, [&](const Config&) {
    std::this_thread::sleep_for(std::chrono::milliseconds(110));
    Annotation a("k");
    backend.launch("k", 100);
  }, backend);
  EXPECT_EQ(r.session().thermal_pauses, 1u);
  EXPECT_EQ(r.at("k", "test__kernel_duration", 0).thermal_pauses, 0u);
  EXPECT_EQ(r.at("k", "test__kernel_duration", 2).thermal_pauses, 1u);
  EXPECT_GE(r.session().thermal_pause_s, 0.5);
}

TEST(Adaptive, StopsWhenTheCiIsNarrowEnoughAndSaysConverged) {
  SimulatedBackend backend;
  std::mt19937 rng(7);
  std::normal_distribution<double> noise(5000, 150);  // a 5 us kernel with 3% spread
  Settings s = quiet();
  s.sampling = Sampling::adaptive;
  s.adaptive.target_pct = 1.0;
  auto r = profile_with_backend(Sweep().axis("n", {1}), s, [&](const Config&) {
    Annotation a("k");
    backend.launch("k", noise(rng));
  }, backend);
  const auto& row = r.rows()[0];
  EXPECT_EQ(row.converged, std::optional<bool>(true));
  // t * 0.03 / sqrt(n) < 0.01 needs n of about 36.
  EXPECT_GT(row.stats.count, 20u);
  EXPECT_LT(row.stats.count, 80u);
  EXPECT_LT(100.0 * (row.stats.ci95_upper - row.stats.mean) / row.stats.mean, 1.0);
}

TEST(Adaptive, RsdCriterionThatCannotBeMetRunsOutOfBudget) {
  SimulatedBackend backend;
  std::mt19937 rng(3);
  std::normal_distribution<double> noise(5000, 500);  // 10% spread never falls under 1%
  Settings s = quiet();
  s.sampling = Sampling::adaptive;
  s.adaptive.criterion = StopCriterion::rsd;
  s.adaptive.max_runs = 200;
  auto r = profile_with_backend(Sweep(), s, [&](const Config&) {
    Annotation a("k");
    backend.launch("k", noise(rng));
  }, backend);
  EXPECT_EQ(r.rows()[0].converged, std::optional<bool>(false));
  EXPECT_EQ(r.rows()[0].stats.count, 200u);
}

TEST(Adaptive, FixedRunsLeaveConvergedEmpty) {
  SimulatedBackend backend;
  auto r = profile_with_backend(Sweep(), quiet(3), one_kernel(backend), backend);
  EXPECT_FALSE(r.rows()[0].converged.has_value());
}

TEST(Adaptive, BadConfigurationsAreRejected) {
  SimulatedBackend backend;
  Settings s = quiet();
  s.sampling = Sampling::adaptive;
  s.adaptive.min_runs = 1;
  EXPECT_THROW(profile_with_backend(Sweep(), s, one_kernel(backend), backend), ConfigError);
  s.adaptive.min_runs = 10;
  s.adaptive.max_runs = 5;
  EXPECT_THROW(profile_with_backend(Sweep(), s, one_kernel(backend), backend), ConfigError);
  s.adaptive.max_runs = 100;
  s.adaptive.target_pct = 0;
  EXPECT_THROW(profile_with_backend(Sweep(), s, one_kernel(backend), backend), ConfigError);
}

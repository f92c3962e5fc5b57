// The energy metrics: the window arithmetic, the meter against the simulated GPU's energy counter
// (coarse updates, wrap-around, a restart, a missing counter, a counter that never moves), and
// whole sessions on the simulated backend, whose GPU draws known power, so every energy value has
// an exact expectation.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/control/energy_meter.hpp"
#include "kscope/annotation.hpp"
#include "kscope/energy.hpp"
#include "kscope/errors.hpp"
#include "kscope/profile.hpp"
#include "kscope/testing.hpp"
#include "test_support.hpp"

using namespace kscope;
using kscope::detail::EnergyCalibration;
using kscope::detail::EnergyMeter;
using kscope::detail::EnergyWindow;
using kscope::testing::SimulatedBackend;
using kscope::testing::SimulatedEnergy;
using kscope::testing::SimulatedPower;
using kscope_test::error_of;

namespace {

// The simulated GPU's defaults: idle 100 W, kernels 300 W, a flush 20 us at 200 W, an update
// every 10 ms, a read 1 ms. A window's two ends are each known to one read, at idle power: 0.1 J.
constexpr double kIdleW = 100, kKernelW = 300, kFlushJ = 200 * 20e-6;
constexpr double kKernelNs = 2e6;
constexpr double kKernelJ = kKernelW * kKernelNs * 1e-9;

Settings energy_settings(std::size_t windows = 3) {
  Settings s;
  s.runs = windows;
  s.verbosity = Verbosity::quiet;
  s.thermal_mode = ThermalMode::off;
  s.metrics = {kEnergyPerRun, kAveragePower, kEnergyAboveIdle};
  s.energy_window_s = 0.1;  // 10 updates of the simulated counter
  return s;
}

// One annotation launching `kernels` kernels of kKernelNs.
Body kernels_of(SimulatedBackend& b, int kernels = 1) {
  return [&b, kernels](const Config&) {
    Annotation a("k");
    for (int i = 0; i < kernels; ++i) b.launch("k", kKernelNs);
  };
}

const SummaryRow& row(const Results& r, const std::string& metric, std::size_t config = 0) {
  return r.at("k", metric, config);
}

}  // namespace

// ---- The arithmetic of a window -----------------------------------------------------------------

TEST(EnergyWindow, DifferenceAcrossTheCountersWrapAround) {
  const std::uint64_t near_end = std::numeric_limits<std::uint64_t>::max() - 499;  // 2^64 - 500
  EnergyWindow w{{near_end, 0.0}, {700, 1.0}};
  EXPECT_DOUBLE_EQ(detail::window_energy_j(w), 1.2);
}

TEST(EnergyWindow, ACounterThatRestartedGivesNaN) {
  EnergyWindow w{{5'000'000'000, 0.0}, {1'000, 1.0}};  // went back: a driver reload, not a wrap
  EXPECT_TRUE(std::isnan(detail::window_energy_j(w)));
}

TEST(EnergyWindow, PerRunValuesLeaveOutMarginsAndFlushes) {
  // 100 runs, each a flush (2 mJ, 10 us) and a kernel (1.5 J, 5 ms), between idle margins of
  // 10 ms and 40 ms at 100 W.
  EnergyCalibration c;
  c.idle_power_w = 100;
  c.flush_energy_j = 0.002;
  c.flush_time_s = 10e-6;
  const double work_s = 100 * (5e-3 + 10e-6), work_j = 100 * (1.5 + 0.002);
  const double energy_j = work_j + 100 * (0.010 + 0.040);
  EnergyWindow w{{1'000'000, 2.0}, {1'000'000 + static_cast<std::uint64_t>(std::llround(energy_j * 1000)),
                                    2.0 + 0.010 + work_s + 0.040},
                 2.010, 2.010 + work_s};
  const detail::EnergyPerRun e = detail::energy_per_run(w, 100, 100, c);
  EXPECT_NEAR(e.energy_j, 1.5, 1e-9);
  EXPECT_NEAR(e.run_time_s, 5e-3, 1e-12);
  EXPECT_NEAR(e.average_power_w, 300, 1e-6);
  EXPECT_NEAR(e.above_idle_j, 1.5 - 100 * 5e-3, 1e-9);
}

// ---- The meter against the simulated counter ----------------------------------------------------

TEST(EnergyMeter, CalibratesIdlePowerFlushAndUpdatePeriod) {
  SimulatedEnergy counter;
  EnergyMeter meter(counter, 0.1);
  std::size_t flushes = 0;
  meter.calibrate([&] { ++flushes, counter.run(20e-6, 200); }, [] {}, true);
  const EnergyCalibration& c = meter.calibration();
  EXPECT_NEAR(c.idle_power_w, kIdleW, 0.1);  // 1 mJ in 0.1 s
  EXPECT_NEAR(c.update_period_s, 0.01, 1e-9);
  EXPECT_GE(flushes, 0.1 / 20e-6);
  EXPECT_NEAR(c.flush_energy_j, kFlushJ, kFlushJ * 0.02);
  EXPECT_NEAR(c.flush_time_s, 20e-6, 1e-9);
}

TEST(EnergyMeter, AWindowOfRunsIsExactToItsEnds) {
  SimulatedEnergy counter;
  EnergyMeter meter(counter, 0.1);
  meter.calibrate([&] { counter.run(20e-6, 200); }, [] {}, true);
  meter.open_window();
  std::size_t runs = 0;
  while (!meter.window_full()) {
    counter.run(20e-6, 200);  // the flush
    counter.run(2e-3, kKernelW);
    ++runs;
  }
  const detail::EnergyPerRun e = meter.close_window(runs, runs);
  EXPECT_EQ(runs, 50u);
  // Each end of the window is known to one read (1 ms at 100 W): 0.2 J over 50 runs.
  EXPECT_NEAR(e.energy_j, 0.6, 0.2 / 50);
  EXPECT_NEAR(e.run_time_s, 2e-3, 1e-9);
  EXPECT_NEAR(e.average_power_w, kKernelW, kKernelW * 0.01);
  EXPECT_NEAR(e.above_idle_j, 0.4, 0.2 / 50);
}

TEST(EnergyMeter, AWindowShorterThanFiveUpdatesIsRefused) {
  SimulatedEnergy counter;
  EnergyMeter meter(counter, 0.03);
  const std::string message = error_of([&] { meter.calibrate([&] { counter.run(20e-6, 200); }, [] {}, false); });
  EXPECT_NE(message.find("Settings::energy_window_s is 0.030 s, shorter than 5 updates of this GPU's energy counter "
                         "(one every 10 ms)"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("at least 0.05 s"), std::string::npos) << message;
}

TEST(EnergyMeter, ACounterThatNeverChangesIsABackendError) {
  SimulatedEnergy counter;
  SimulatedPower off;
  off.idle_w = 0;
  counter.set_power(off);
  EnergyMeter meter(counter, 0.1);
  const std::string message = error_of<BackendError>([&] { meter.calibrate([] {}, [] {}, false); });
  EXPECT_NE(message.find("the GPU's energy counter did not change for 5 s"), std::string::npos) << message;
}

TEST(EnergyMeter, AMissingCounterSaysWhy) {
  SimulatedEnergy counter;
  counter.remove("this GPU has no total-energy counter");
  EXPECT_EQ(error_of<BackendError>([&] { EnergyMeter(counter, 1.0); }), "this GPU has no total-energy counter");
}

// ---- Whole sessions on the simulated backend ----------------------------------------------------

TEST(EnergySession, EnergyPowerAndAboveIdleBesideTheDurationsOfTheSameRuns) {
  SimulatedBackend backend;
  const Results r = profile_with_backend(Sweep(), energy_settings(), kernels_of(backend), backend);
  EXPECT_NEAR(row(r, kEnergyPerRun).avg_value, kKernelJ, kKernelJ * 0.01);
  EXPECT_NEAR(row(r, kAveragePower).avg_value, kKernelW, kKernelW * 0.01);
  EXPECT_NEAR(row(r, kEnergyAboveIdle).avg_value, (kKernelW - kIdleW) * 2e-3, 0.004);
  EXPECT_EQ(row(r, kEnergyPerRun).unit, "J");
  EXPECT_EQ(row(r, kAveragePower).unit, "W");
  // Every metric's samples are the windows: 3 of them, the durations their runs' mean.
  for (const char* metric : {"test__kernel_duration", kEnergyPerRun, kAveragePower, kEnergyAboveIdle})
    EXPECT_EQ(row(r, metric).stats.count, 3u) << metric;
  EXPECT_DOUBLE_EQ(row(r, "test__kernel_duration").avg_value, kKernelNs);
  EXPECT_EQ(r.samples().size(), 3u * 4u);
  // The session facts: idle power and the flush's energy, measured once.
  EXPECT_NEAR(r.session().idle_power_w, kIdleW, 0.2);
  EXPECT_NEAR(r.session().flush_energy_j, kFlushJ, kFlushJ * 0.05);
  EXPECT_NEAR(r.session().energy_update_s, 0.01, 1e-9);
  const Table t = r.summary_table();
  const auto& columns = t.columns;
  EXPECT_NE(std::find(columns.begin(), columns.end(), "IdlePowerW"), columns.end());
}

TEST(EnergySession, EnergyPerRunIsLinearInTheKernelsARunLaunches) {
  SimulatedBackend backend;
  Settings s = energy_settings();
  s.combine_kernel_metrics = std::plus<double>{};
  const Results r = profile_with_backend(Sweep().axis("kernels", {1, 2, 4}), s, [&](const Config& c) {
    Annotation a("k");
    for (int i = 0; i < c.get<std::int64_t>("kernels"); ++i) backend.launch("k", kKernelNs);
  }, backend);
  const double one = row(r, kEnergyPerRun, 0).avg_value;
  EXPECT_NEAR(row(r, kEnergyPerRun, 1).avg_value / one, 2, 0.02);
  EXPECT_NEAR(row(r, kEnergyPerRun, 2).avg_value / one, 4, 0.04);
  EXPECT_NEAR(row(r, kEnergyAboveIdle, 2).avg_value / row(r, kEnergyAboveIdle, 0).avg_value, 4, 0.04);
}

TEST(EnergySession, WithoutFlushesNothingIsTakenOut) {
  SimulatedBackend backend;
  Settings s = energy_settings();
  s.cache_control = CacheControl::none;
  const Results r = profile_with_backend(Sweep(), s, kernels_of(backend), backend);
  EXPECT_NEAR(row(r, kEnergyPerRun).avg_value, kKernelJ, kKernelJ * 0.01);
  EXPECT_TRUE(std::isnan(r.session().flush_energy_j));
  // The wake-up's flushes only, 0.2 s of them in batches of 64.
  EXPECT_GE(backend.flush_count(), 0.2 / 20e-6);
  EXPECT_LE(backend.flush_count(), 0.2 / 20e-6 + 64);
}

TEST(EnergySession, WarmUpsStayOutOfTheWindows) {
  SimulatedBackend backend;
  Settings s = energy_settings(2);
  s.warmup_runs = 3;
  std::size_t calls = 0;
  const Results r = profile_with_backend(Sweep(), s, [&](const Config&) {
    ++calls;
    Annotation a("k");
    backend.launch("k", calls <= 3 ? 50e6 : kKernelNs);  // warm-ups of 50 ms would show in the energy
  }, backend);
  EXPECT_NEAR(row(r, kEnergyPerRun).avg_value, kKernelJ, kKernelJ * 0.01);
  EXPECT_DOUBLE_EQ(row(r, "test__kernel_duration").avg_value, kKernelNs);
}

TEST(EnergySession, DeriveMetricSeesTheWindowsEnergyForFlopPerJoule) {
  SimulatedBackend backend;
  Settings s = energy_settings();
  s.metrics = {kEnergyPerRun};
  s.derive_metric = [](const MeasuredValues& m, const Config&) { return energy_efficiency(m, 1e12, 3e9); };
  const Results r = profile_with_backend(Sweep(), s, kernels_of(backend), backend);
  EXPECT_NEAR(row(r, "flop_per_joule").avg_value, 1e12 / kKernelJ, 1e12 / kKernelJ * 0.01);
  EXPECT_EQ(row(r, "flop_per_joule").unit, "FLOP/J");
  EXPECT_NEAR(row(r, "bytes_per_joule").avg_value, 3e9 / kKernelJ, 3e9 / kKernelJ * 0.01);
  EXPECT_EQ(row(r, "bytes_per_joule").unit, "B/J");
}

TEST(EnergySession, DeclaredWorkGivesFlopAndBytesPerJouleWithoutDeriveMetric) {
  SimulatedBackend backend;
  Settings s = energy_settings();
  s.work = [](const Config&) { return Work{.bytes = 3e9, .flops = 1e12}; };
  const Results r = profile_with_backend(Sweep(), s, kernels_of(backend), backend);
  EXPECT_NEAR(row(r, "flop_per_joule").avg_value, 1e12 / kKernelJ, 1e12 / kKernelJ * 0.01);
  EXPECT_EQ(row(r, "flop_per_joule").unit, "FLOP/J");
  EXPECT_NEAR(row(r, "bytes_per_joule").avg_value, 3e9 / kKernelJ, 3e9 / kKernelJ * 0.01);
  EXPECT_EQ(row(r, "bytes_per_joule").stats.count, 3u);  // one per window, as the energy
}

TEST(EnergySession, DeriveMetricsOwnFlopPerJouleWinsOverTheDeclaredWorks) {
  SimulatedBackend backend;
  Settings s = energy_settings();
  s.work = [](const Config&) { return Work{.bytes = 3e9, .flops = 1e12}; };
  s.derive_metric = [](const MeasuredValues& m, const Config&) { return energy_efficiency(m, 2e12, 0); };
  const Results r = profile_with_backend(Sweep(), s, kernels_of(backend), backend);
  EXPECT_NEAR(row(r, "flop_per_joule").avg_value, 2e12 / kKernelJ, 2e12 / kKernelJ * 0.01);
  const auto& rows = r.rows();
  EXPECT_EQ(std::count_if(rows.begin(), rows.end(), [](const SummaryRow& x) { return x.metric == "flop_per_joule"; }),
            1);
  EXPECT_NEAR(row(r, "bytes_per_joule").avg_value, 3e9 / kKernelJ, 3e9 / kKernelJ * 0.01);  // from the work
}

// With the energy metrics the work gives each window FLOP/J and bytes/J: a resume adding it would
// leave the configs read back without them.
TEST(EnergySession, AResumeThatAddsWorkIsRefused) {
  kscope_test::TempDir dir;
  Settings s = energy_settings(2);
  s.output_prefix = dir.prefix();
  {
    SimulatedBackend backend;
    profile_with_backend(Sweep(), s, kernels_of(backend), backend);
  }
  s.resume = true;
  s.work = [](const Config&) { return Work{.flops = 1e12}; };
  SimulatedBackend backend;
  const std::string message = error_of([&] { profile_with_backend(Sweep(), s, kernels_of(backend), backend); });
  EXPECT_NE(message.find("Settings::work: not set on disk, set now"), std::string::npos) << message;
}

TEST(EnergySession, WorkWithoutTheEnergyMetricsAddsNoEnergyRows) {
  SimulatedBackend backend;
  Settings s = energy_settings();
  s.metrics = {};
  s.work = [](const Config&) { return Work{.bytes = 3e9, .flops = 1e12}; };
  const Results r = profile_with_backend(Sweep(), s, kernels_of(backend), backend);
  const auto& rows = r.rows();
  EXPECT_FALSE(rows.empty());
  EXPECT_TRUE(std::none_of(rows.begin(), rows.end(), [](const SummaryRow& x) { return x.unit == "FLOP/J"; }));
}

TEST(EnergySession, EfficiencyWithoutEnergyPerRunNamesTheMetricToAdd) {
  const std::vector<std::string> names{"cupti__kernel_duration"};
  const std::vector<double> values{1.0};
  const std::string message = error_of([&] { energy_efficiency(MeasuredValues(&names, &values), 1, 1); });
  EXPECT_NE(message.find("FLOP/J and bytes/J are computed from nvml__energy_per_run, which is not measured here"),
            std::string::npos)
      << message;
}

TEST(EnergySession, TheCounterWrappingAroundChangesNothing) {
  SimulatedBackend backend;
  SimulatedPower power;
  power.start_mj = std::numeric_limits<std::uint64_t>::max() - 3000;  // wraps within the calibration
  backend.device().energy().set_power(power);
  const Results r = profile_with_backend(Sweep(), energy_settings(), kernels_of(backend), backend);
  EXPECT_NEAR(r.session().idle_power_w, kIdleW, 0.2);
  EXPECT_NEAR(row(r, kEnergyPerRun).avg_value, kKernelJ, kKernelJ * 0.01);
}

TEST(EnergySession, AWindowInWhichTheCounterRestartedIsNaN) {
  SimulatedBackend backend;
  std::size_t calls = 0;
  const Results r = profile_with_backend(Sweep(), energy_settings(), [&](const Config&) {
    if (++calls == 80) backend.device().energy().restart_at(0);  // in the second window
    Annotation a("k");
    backend.launch("k", kKernelNs);
  }, backend);
  EXPECT_EQ(row(r, kEnergyPerRun).stats.count, 2u);  // the other windows
  EXPECT_NEAR(row(r, kEnergyPerRun).avg_value, kKernelJ, kKernelJ * 0.01);
  EXPECT_EQ(row(r, "test__kernel_duration").stats.count, 3u);
}

TEST(EnergySession, AMissingCounterIsABackendErrorSayingWhy) {
  SimulatedBackend backend;
  backend.device().energy().remove("this GPU has no total-energy counter (Not Supported)");
  const std::string message = error_of<BackendError>(
      [&] { profile_with_backend(Sweep(), energy_settings(), kernels_of(backend), backend); });
  EXPECT_EQ(message, "this GPU has no total-energy counter (Not Supported)");
}

TEST(EnergySession, EveryRunMustOpenOneAnnotation) {
  SimulatedBackend backend;
  const std::string message = error_of<SweepError>([&] {
    profile_with_backend(Sweep(), energy_settings(), [&](const Config&) {
      {
        Annotation a("k");
        backend.launch("k", kKernelNs);
      }
      Annotation b("other");
      backend.launch("other", kKernelNs);
    }, backend);
  });
  EXPECT_NE(message.find("the energy metrics measure the whole GPU over back-to-back runs, so every run must open "
                         "exactly one annotation, the same one; this run opened 'k', 'other'"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("run 1 of energy window 1"), std::string::npos) << message;
}

TEST(EnergySession, GoesWithDurationBackendsOnly) {
  Settings s = energy_settings();
  EXPECT_EQ(chosen_backend(s), Backend::cupti);
  s.metrics.push_back("events__region_duration");
  EXPECT_EQ(chosen_backend(s), Backend::events);
  s.validate();
  s.metrics = {kEnergyPerRun, "dram__bytes_read.sum"};
  const std::string message = error_of([&] { s.validate(); });
  EXPECT_NE(message.find("the energy metrics are measured beside kernel durations, over windows of runs repeated back "
                         "to back, with Backend::cupti or Backend::events, not with Backend::counters"),
            std::string::npos)
      << message;
  s.metrics = {kEnergyPerRun};
  s.energy_window_s = 0;
  EXPECT_NE(error_of([&] { s.validate(); }).find("Settings::energy_window_s is 0: it must be a duration in seconds above 0"),
            std::string::npos);
}

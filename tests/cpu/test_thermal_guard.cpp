// The thermal guard against a simulated GPU that heats while it runs and cools while paused.
#include <gtest/gtest.h>

#include "core/control/thermal_guard.hpp"
#include "kscope/errors.hpp"

using kscope::Settings;
using kscope::ThermalError;
using kscope::ThermalMode;
using kscope::detail::ThermalGuard;

namespace {

// Margin falls by `heat_per_run` per run and rises by `cool_per_s` per paused second, up to `max`.
// A run takes `run_s`, longer than the guard's check interval unless a test says otherwise.
struct FakeGpu {
  double margin = 30, heat_per_run = 2, cool_per_s = 4, max_margin = 60;
  double now = 0, run_s = 0.2;
  ThermalGuard guard(const Settings& s) {
    return ThermalGuard(
        s, [this] { return std::optional<double>(margin); },
        [this](double sec) {
          now += sec;
          margin = std::min(max_margin, margin + cool_per_s * sec);
        },
        [this] { return now; });
  }
  double run(ThermalGuard& g) {
    const double paused = g.before_run();
    margin -= heat_per_run;
    now += run_s;
    return paused;
  }
};

Settings thermal(ThermalMode mode) {
  Settings s;
  s.thermal_mode = mode;
  return s;
}

}  // namespace

TEST(ThermalGuard, PausesAtWaitAndResumesAtCont) {
  FakeGpu gpu;
  auto g = gpu.guard(thermal(ThermalMode::manual));
  double paused = 0;
  for (int i = 0; i < 10; ++i) paused += gpu.run(g);  // 30 -> 12 after 9 runs: no pause yet
  EXPECT_EQ(g.pauses(), 0u);
  paused += gpu.run(g);  // margin 10 <= wait: cools to >= 20 at 4 °C/s in 0.5 s steps
  EXPECT_EQ(g.pauses(), 1u);
  EXPECT_DOUBLE_EQ(paused, 2.5);
  EXPECT_DOUBLE_EQ(g.paused_seconds(), 2.5);
  EXPECT_GE(gpu.margin + gpu.heat_per_run, 20.0);
}

TEST(ThermalGuard, ManualTimeoutNamesTheFix) {
  FakeGpu gpu;
  gpu.margin = 5;
  gpu.cool_per_s = 0.1;  // barely cools
  Settings s = thermal(ThermalMode::manual);
  s.thermal_timeout_s = 3;
  auto g = gpu.guard(s);
  try {
    g.before_run();
    FAIL();
  } catch (const ThermalError& e) {
    // Nsight Python's sentences first.
    EXPECT_EQ(std::string(e.what()).rfind("Timeout after 3s. Cannot reach Settings::thermal_cont_c=20°C (current thermal "
                                          "headroom: ", 0),
              0u)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("increase Settings::thermal_timeout_s"), std::string::npos);
  }
}

TEST(ThermalGuard, AutomaticLowersContOnTimeoutThenGivesUpAtTheMinimum) {
  FakeGpu gpu;
  gpu.margin = 9;
  gpu.max_margin = 14.5;  // can reach 14 but never 20, 17 or 15... lowers 20 -> 17 -> 14
  Settings s = thermal(ThermalMode::automatic);
  s.thermal_timeout_s = 5;
  auto g = gpu.guard(s);
  g.before_run();
  EXPECT_DOUBLE_EQ(g.resume_threshold(), 14.0);
  EXPECT_EQ(g.pauses(), 1u);

  FakeGpu hot;
  hot.margin = 5;
  hot.max_margin = 8;  // never reaches even the 12 °C minimum
  auto h = hot.guard(s);
  try {
    h.before_run();
    FAIL();
  } catch (const ThermalError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("Adaptive thermal control reached minimum Settings::thermal_cont_c=12°C but GPU "
                                          "thermal headroom is only ", 0),
              0u)
        << e.what();
  }
}

TEST(ThermalGuard, AutomaticCoolsLongerWhenTheGpuReheatsQuickly) {
  FakeGpu gpu;
  gpu.heat_per_run = 5;  // 20 -> 10 in two runs
  gpu.margin = 9;
  auto g = gpu.guard(thermal(ThermalMode::automatic));
  gpu.run(g);  // first pause: cools to 21, cont stays 20
  EXPECT_DOUBLE_EQ(g.resume_threshold(), 20.0);
  for (int i = 0; i < 3; ++i) gpu.run(g);  // reheats within fewer than 5 runs: cont 20 -> 23
  EXPECT_EQ(g.pauses(), 2u);
  EXPECT_DOUBLE_EQ(g.resume_threshold(), 23.0);
}

TEST(ThermalGuard, AutomaticResumesEarlierWhenTheGpuRanLong) {
  FakeGpu gpu;
  gpu.heat_per_run = 0.25;
  gpu.margin = 9;
  auto g = gpu.guard(thermal(ThermalMode::automatic));
  gpu.run(g);  // pause, resume at >= 20
  for (int i = 0; i < 60; ++i) gpu.run(g);  // ~44 runs until the next pause: between 5 and 50, no change
  EXPECT_DOUBLE_EQ(g.resume_threshold(), 20.0);
  gpu.heat_per_run = 0.1;  // about 100 runs before the next pause: more than 50, so cont 20 -> 17
  const std::size_t pauses = g.pauses();
  while (g.pauses() == pauses) gpu.run(g);
  EXPECT_DOUBLE_EQ(g.resume_threshold(), 17.0);
}

TEST(ThermalGuard, ShortRunsReadTheMarginAtMostEveryCheckInterval) {
  FakeGpu gpu;
  gpu.run_s = 0.001;
  gpu.heat_per_run = 0;
  int reads = 0;
  ThermalGuard g(
      thermal(ThermalMode::manual), [&] { ++reads; return std::optional<double>(gpu.margin); }, [](double) {},
      [&] { return gpu.now; });
  for (int i = 0; i < 1000; ++i) gpu.run(g);  // one second of 1 ms runs
  EXPECT_GE(reads, 9);
  EXPECT_LE(reads, 11);
}

TEST(ThermalGuard, OffModeAndUnsupportedReadingsNeverPause) {
  FakeGpu gpu;
  gpu.margin = 0;
  auto off = gpu.guard(thermal(ThermalMode::off));
  EXPECT_DOUBLE_EQ(off.before_run(), 0.0);
  EXPECT_FALSE(off.active());
  ThermalGuard unsupported(thermal(ThermalMode::manual), [] { return std::optional<double>(); }, [](double) {},
                           [] { return 0.0; });
  EXPECT_DOUBLE_EQ(unsupported.before_run(), 0.0);
}

TEST(ThermalGuard, ContMustExceedWait) {
  Settings s = thermal(ThermalMode::manual);
  s.thermal_wait_c = 20;
  s.thermal_cont_c = 15;
  try {
    ThermalGuard g(s, [] { return std::optional<double>(30); }, [](double) {}, [] { return 0.0; });
    FAIL();
  } catch (const kscope::ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("Settings::thermal_cont_c (15°C) must be greater than Settings::thermal_wait_c (20°C)"),
              std::string::npos);
  }
}

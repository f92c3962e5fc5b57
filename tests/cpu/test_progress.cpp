#include "core/engine/progress_reporter.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace {

using kscope::Verbosity;
using kscope::detail::ProgressReporter;

// A clock the test moves by hand.
struct FakeClock {
  double now = 0;
  ProgressReporter::Clock reader() {
    return [this] { return now; };
  }
};

// What is on screen after the last carriage return.
std::string last_redraw(const std::string& text) { return text.substr(text.rfind('\r') + 1); }

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// Two configs of three body calls, each taking 0.1 s.
void run_two_configs(ProgressReporter& progress, FakeClock& clock) {
  for (std::size_t config = 0; config < 2; ++config) {
    progress.config_started(config, "n=" + std::to_string(1024 << config));
    progress.debug("config " + std::to_string(config) + " set up");
    for (int run = 0; run < 3; ++run) {
      clock.now += 0.1;
      progress.run_finished();
    }
    progress.config_finished();
  }
  progress.finished();
}

TEST(Progress, QuietPrintsNothing) {
  for (bool terminal : {false, true}) {
    std::ostringstream out;
    FakeClock clock;
    {
      ProgressReporter progress(Verbosity::quiet, 2, 3, out, terminal, clock.reader());
      run_two_configs(progress, clock);
    }
    EXPECT_EQ(out.str(), "");
  }
}

TEST(Progress, InfoWithoutTerminalPrintsOneLinePerConfig) {
  std::ostringstream out;
  FakeClock clock;
  ProgressReporter progress(Verbosity::info, 2, 3, out, false, clock.reader());
  run_two_configs(progress, clock);
  EXPECT_EQ(out.str(),
            "[kscope] config 1/2 (n=1024): 3 runs in 0.30 s\n"
            "[kscope] config 2/2 (n=2048): 3 runs in 0.30 s\n"
            "[kscope] profiled 2 configs in 0.60 s\n");
  EXPECT_FALSE(contains(out.str(), "\r"));
  EXPECT_FALSE(contains(out.str(), "\x1b"));
}

TEST(Progress, DebugAddsMessagesAndNeverDrawsABar) {
  std::ostringstream out;
  FakeClock clock;
  ProgressReporter progress(Verbosity::debug, 2, 3, out, true, clock.reader());
  run_two_configs(progress, clock);
  EXPECT_EQ(out.str(),
            "[kscope] config 0 set up\n"
            "[kscope] config 1/2 (n=1024): 3 runs in 0.30 s\n"
            "[kscope] config 1 set up\n"
            "[kscope] config 2/2 (n=2048): 3 runs in 0.30 s\n"
            "[kscope] profiled 2 configs in 0.60 s\n");
}

TEST(Progress, ConfigWithoutParametersAndSingularWords) {
  std::ostringstream out;
  FakeClock clock;
  ProgressReporter progress(Verbosity::info, 1, 1, out, false, clock.reader());
  progress.config_started(0, "");
  clock.now = 12.34;
  progress.run_finished();
  progress.config_finished();
  progress.finished();
  EXPECT_EQ(out.str(),
            "[kscope] config 1/1: 1 run in 12.3 s\n"
            "[kscope] profiled 1 config in 12.3 s\n");
}

TEST(Progress, TerminalBarShowsPercentAndEtaFromTheAverageRunTime) {
  std::ostringstream out;
  FakeClock clock;
  ProgressReporter progress(Verbosity::info, 2, 2, out, true, clock.reader());

  progress.config_started(0, "n=1");
  EXPECT_TRUE(contains(last_redraw(out.str()), "ETA --")) << out.str();  // no run timed yet

  clock.now = 1.0;
  progress.run_finished();  // 1 of 4 runs in 1 s: 3 more take 3 s
  std::string screen = last_redraw(out.str());
  EXPECT_TRUE(contains(screen, "[#####...............]  25%")) << screen;
  EXPECT_TRUE(contains(screen, "config 1/2 (n=1)")) << screen;
  EXPECT_TRUE(contains(screen, "elapsed 1.00 s")) << screen;
  EXPECT_TRUE(contains(screen, "ETA 3.00 s")) << screen;

  clock.now = 2.0;
  progress.run_finished();
  progress.config_finished();
  progress.config_started(1, "n=2");
  clock.now = 6.0;
  progress.run_finished();  // 3 runs in 6 s: the last one takes 2 s
  screen = last_redraw(out.str());
  EXPECT_TRUE(contains(screen, " 75%")) << screen;
  EXPECT_TRUE(contains(screen, "config 2/2 (n=2)")) << screen;
  EXPECT_TRUE(contains(screen, "ETA 2.00 s")) << screen;

  clock.now = 8.0;
  progress.run_finished();
  progress.config_finished();
  progress.finished();
  const std::string text = out.str();
  EXPECT_FALSE(contains(text, "\n[kscope] [")) << "the bar must be redrawn in place";
  const std::string final_bar = text.substr(text.rfind('\r') + 1);
  EXPECT_TRUE(contains(final_bar, "[####################] 100%")) << final_bar;
  EXPECT_TRUE(contains(final_bar, "ETA 0.00 s\n[kscope] profiled 2 configs in 8.00 s\n"))
      << final_bar;
}

TEST(Progress, TerminalRedrawsAreThrottled) {
  std::ostringstream out;
  FakeClock clock;
  ProgressReporter progress(Verbosity::info, 1, 100, out, true, clock.reader());
  progress.config_started(0, "n=1");
  for (int run = 0; run < 100; ++run) {
    clock.now += 0.01;  // ten runs per redraw interval
    progress.run_finished();
  }
  const std::string text = out.str();
  const auto redraws = std::count(text.begin(), text.end(), '\r');
  EXPECT_GE(redraws, 9);
  EXPECT_LE(redraws, 12);
}

TEST(Progress, ShorterRedrawBlanksTheRestOfTheLongerOne) {
  std::ostringstream out;
  FakeClock clock;
  ProgressReporter progress(Verbosity::info, 2, 1, out, true, clock.reader());
  progress.config_started(0, "a much longer config text");
  const std::size_t long_width = last_redraw(out.str()).size();
  progress.config_started(1, "n=1");
  const std::string screen = last_redraw(out.str());
  EXPECT_EQ(screen.size(), long_width);
  EXPECT_EQ(screen.back(), ' ');
}

TEST(Progress, BarCutsLongConfigTextWithAnEllipsis) {
  std::ostringstream out;
  FakeClock clock;
  ProgressReporter progress(Verbosity::info, 1, 1, out, true, clock.reader());
  progress.config_started(0, std::string(100, 'x'));
  const std::string screen = last_redraw(out.str());
  EXPECT_TRUE(contains(screen, "(" + std::string(31, 'x') + "\u2026)")) << screen;
  EXPECT_FALSE(contains(screen, std::string(32, 'x'))) << screen;
}

TEST(Progress, InterruptedBarLineIsEndedOnDestruction) {
  std::ostringstream out;
  FakeClock clock;
  {
    ProgressReporter progress(Verbosity::info, 3, 1, out, true, clock.reader());
    progress.config_started(0, "n=1");  // the sweep fails here: finished() never comes
  }
  const std::string text = out.str();
  EXPECT_EQ(text.back(), '\n');
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 1);
}

// Without a clock of the caller's, the time a config took is read from the steady clock.
TEST(Progress, TheDefaultClockMeasuresTheTimeAConfigTakes) {
  std::ostringstream out;
  ProgressReporter progress(Verbosity::info, 1, 1, out, false);
  progress.config_started(0, "n=1");
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  progress.run_finished();
  progress.config_finished();
  const std::string line = out.str();
  const std::string before = "[kscope] config 1/1 (n=1): 1 run in ";
  ASSERT_TRUE(contains(line, before)) << line;
  EXPECT_GE(std::stod(line.substr(line.find(before) + before.size())), 0.03) << line;
}

TEST(Progress, StderrFactoryBuildsAReporter) {
  EXPECT_NE(kscope::detail::make_stderr_progress(Verbosity::quiet, 1, 1), nullptr);
}

}  // namespace

namespace {

using kscope::SweepProgress;

TEST(ProgressObserver, ReceivesEveryRunWithEtaInsteadOfTheStream) {
  FakeClock clock;
  std::ostringstream out;
  std::vector<SweepProgress> seen;
  {
    ProgressReporter progress(Verbosity::debug, 2, 3, out, false, clock.reader(),
                              [&](const SweepProgress& p) { seen.push_back(p); });
    run_two_configs(progress, clock);
  }
  using E = SweepProgress::Event;
  ASSERT_EQ(seen.size(), 2u * (1 + 3 + 1) + 1);  // start, three runs, end per config; the sweep's end
  EXPECT_EQ(seen[0].event, E::config_started);
  EXPECT_FALSE(seen[0].eta_s.has_value());  // no run timed yet
  const SweepProgress& second_run = seen[2];
  EXPECT_EQ(second_run.event, E::run_finished);
  EXPECT_EQ(second_run.config_runs_done, 2u);
  EXPECT_EQ(second_run.runs_per_config, 3u);
  EXPECT_EQ(second_run.total_configs, 2u);
  EXPECT_EQ(second_run.config_text, "n=1024");
  EXPECT_NEAR(second_run.elapsed_s, 0.2, 1e-9);
  ASSERT_TRUE(second_run.eta_s.has_value());
  EXPECT_NEAR(*second_run.eta_s, 0.4, 1e-9);  // 0.1 s per run, four runs to come
  EXPECT_EQ(seen[5].config_index, 1u);
  EXPECT_EQ(seen[9].event, E::config_finished);
  EXPECT_EQ(seen.back().event, E::sweep_finished);
  EXPECT_EQ(seen.back().runs_done, 6u);
  EXPECT_NEAR(*seen.back().eta_s, 0.0, 1e-9);
  // Only the debug messages reach the stream.
  EXPECT_TRUE(contains(out.str(), "config 0 set up"));
  EXPECT_FALSE(contains(out.str(), "profiled"));
  EXPECT_FALSE(contains(out.str(), "config 1/2"));
}

TEST(ProgressObserver, IsNotCalledWhenQuiet) {
  FakeClock clock;
  std::ostringstream out;
  int calls = 0;
  {
    ProgressReporter progress(Verbosity::quiet, 2, 3, out, false, clock.reader(),
                              [&](const SweepProgress&) { ++calls; });
    run_two_configs(progress, clock);
  }
  EXPECT_EQ(calls, 0);
  EXPECT_EQ(out.str(), "");
}

}  // namespace

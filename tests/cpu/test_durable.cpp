// Nothing measured is lost: samples streamed to disk as each config finishes, a sweep killed
// (SIGKILL, in a child process) or interrupted (SIGINT) and resumed, write failures that keep the
// results, and the output prefix checked before anything runs.
#include <gtest/gtest.h>
#include <malloc.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <sstream>
#include <thread>
#include <tuple>

#include "core/engine/sample_stream.hpp"
#include "kscope/annotation.hpp"
#include "kscope/errors.hpp"
#include "kscope/info_collector.hpp"
#include "kscope/profile.hpp"
#include "kscope/testing.hpp"
#include "resident_memory.hpp"
#include "test_support.hpp"

using namespace kscope;
using kscope::testing::SimulatedBackend;
namespace fs = std::filesystem;
using kscope_test::reset_peak_rss;
using kscope_test::status_bytes;
using kscope_test::TempDir;

namespace {

constexpr std::size_t kRuns = 3, kWarmups = 1;

Settings streamed(const std::string& prefix) {
  Settings s;
  s.runs = kRuns;
  s.warmup_runs = kWarmups;
  s.verbosity = Verbosity::quiet;
  s.output_prefix = prefix;
  return s;
}

Sweep sweep_of(int configs) {
  std::vector<Value> n;
  for (int i = 1; i <= configs; ++i) n.push_back(i);
  return Sweep().axis("n", n).axis("dtype", {"f32"});
}

// A body whose durations depend only on the config and how often it was called for that config,
// as a real kernel's would not, but deterministically: a resumed sweep must reproduce an
// uninterrupted one exactly. Counts its calls.
struct Workload {
  explicit Workload(SimulatedBackend& b) : backend(b) {}
  SimulatedBackend& backend;
  std::map<std::size_t, int> calls_per_config;
  int calls = 0;
  std::function<void(const Config&, int call)> hook;  // before the call's launch; `call` counts from 1

  Body body() {
    return [this](const Config& c) {
      const int call = calls_per_config[c.index()]++;
      ++calls;
      if (hook) hook(c, calls);
      Annotation a("k");
      backend.launch("kern", 100.0 * static_cast<double>(c.get<std::int64_t>("n")) + call % 5);
    };
  }
};

std::string read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::vector<std::string> lines(const std::string& path) {
  std::vector<std::string> out;
  std::istringstream in(read(path));
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

// The same rows, cell for cell (doubles exactly).
void expect_same_tables(const Results& a, const Results& b) {
  for (const auto& [x, y] : {std::pair{a.summary_table(), b.summary_table()}, {a.samples_table(), b.samples_table()}}) {
    ASSERT_EQ(x.columns, y.columns);
    ASSERT_EQ(x.rows.size(), y.rows.size());
    for (std::size_t r = 0; r < x.rows.size(); ++r)
      for (std::size_t c = 0; c < x.columns.size(); ++c)
        EXPECT_TRUE(x.rows[r][c] == y.rows[r][c]) << "row " << r << ", column " << x.columns[c];
  }
}

// The same sweep measured in one go, without files.
Results uninterrupted(int configs, Settings s = streamed("")) {
  s.output_prefix.clear();
  s.resume = false;
  SimulatedBackend backend;
  Workload w(backend);
  return profile_with_backend(sweep_of(configs), s, w.body(), backend);
}

// The sweep measured with `s`, resumed or not, by a body that fails at config `fail_at` (-1: at
// none); `calls`, if given, receives how often the body ran.
Results measure_failing_at(const Sweep& sweep, Settings s, bool resume, int fail_at, int* calls = nullptr) {
  SimulatedBackend backend;
  Workload w(backend);
  w.hook = [&](const Config& c, int) {
    if (static_cast<int>(c.index()) == fail_at) throw std::runtime_error("stop");
  };
  s.resume = resume;
  Results r = profile_with_backend(sweep, s, w.body(), backend);
  if (calls) *calls = w.calls;
  return r;
}

constexpr std::size_t kRowsPerConfig = kRuns;  // one annotation, one metric

// How much `work` raises the peak resident memory (VmHWM after it, less VmRSS before), run in a
// child process so that neither the test's heap nor another measurement's serves it; NaN when
// `work` returns false or throws.
double peak_growth_in_child(const std::function<bool()>& work) {
  int fds[2];
  if (pipe(fds) != 0) return NAN;
  const pid_t child = fork();
  if (child == 0) {
    close(fds[0]);
    double growth = NAN;
    try {
      malloc_trim(0);
      const double before = status_bytes("VmRSS");
      reset_peak_rss();
      if (work()) growth = status_bytes("VmHWM") - before;
    } catch (...) {
    }
    _exit(::write(fds[1], &growth, sizeof growth) == sizeof growth ? 0 : 1);
  }
  close(fds[1]);
  double growth = NAN;
  if (::read(fds[0], &growth, sizeof growth) != sizeof growth) growth = NAN;
  close(fds[0]);
  waitpid(child, nullptr, 0);
  return growth;
}

}  // namespace

TEST(Streaming, EachConfigsSamplesAreOnDiskWhenTheNextConfigStarts) {
  TempDir dir;
  const std::string prefix = dir.prefix();
  SimulatedBackend backend;
  Workload w(backend);
  std::vector<std::size_t> rows_seen, progress_seen;
  w.hook = [&](const Config& c, int) {
    if (w.calls_per_config[c.index()] != 1) return;  // the first call of each config
    rows_seen.push_back(lines(prefix + "samples.csv").size() - 1);
    progress_seen.push_back(lines(prefix + "progress.jsonl").size());
  };
  Settings s = streamed(prefix);
  s.fsync_interval_s = 0;  // each config written and flushed as it finishes
  const Results r = profile_with_backend(sweep_of(3), s, w.body(), backend);
  EXPECT_EQ(rows_seen, (std::vector<std::size_t>{0, kRowsPerConfig, 2 * kRowsPerConfig}));
  EXPECT_EQ(progress_seen, (std::vector<std::size_t>{0, 1, 2}));
  // At the end the streamed file is what Results writes, and the summary files are there.
  std::ostringstream expected;
  write_csv(r.samples_table(), expected);
  EXPECT_EQ(read(prefix + "samples.csv"), expected.str());
  EXPECT_TRUE(fs::exists(prefix + "summary.csv") && fs::exists(prefix + "results.json"));
  const auto progress = lines(prefix + "progress.jsonl");
  ASSERT_EQ(progress.size(), 3u);
  EXPECT_EQ(progress[1], R"({"config":1,"samples":3,"converged":null,"thermal_pauses":0})");
  const std::string manifest = read(prefix + "manifest.json");
  for (const char* fact : {R"x("backend": "test (simulated)")x", R"("runs": 3)", R"("axes": [)", R"("kscope_version")"})
    EXPECT_NE(manifest.find(fact), std::string::npos) << fact << " in " << manifest;
  for (const auto& f : fs::directory_iterator(fs::path(prefix).parent_path()))
    EXPECT_NE(f.path().extension(), ".tmp") << f.path() << " left behind";
}

TEST(Streaming, AnOutputPrefixInAMissingDirectoryFailsBeforeAnythingRuns) {
  TempDir dir;
  SimulatedBackend backend;
  Workload w(backend);
  try {
    profile_with_backend(sweep_of(2), streamed(dir.prefix("missing/sweep_")), w.body(), backend);
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("Settings::output_prefix '"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("missing' does not exist"), std::string::npos) << e.what();
  }
  EXPECT_EQ(w.calls, 0);
  EXPECT_EQ(backend.session_count(), 0u);
}

TEST(Streaming, WritingTheSummaryFilesFailsAfterTheSweepAndTheResultsAreKept) {
  TempDir dir;
  const std::string prefix = dir.prefix();
  SimulatedBackend backend;
  Workload w(backend);
  w.hook = [&](const Config&, int call) {
    if (call == 1) fs::create_directory(prefix + "summary.csv");  // nothing can be written in its place
  };
  try {
    profile_with_backend(sweep_of(2), streamed(prefix), w.body(), backend);
    FAIL() << "expected SweepError";
  } catch (const SweepError& e) {
    EXPECT_NE(std::string(e.what()).find("all configs ran, but writing the results to"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("all 2 summary rows are kept in SweepError::partial_results()"),
              std::string::npos)
        << e.what();
    expect_same_tables(e.partial_results(), uninterrupted(2));
  }
}

// By default, configs that finish within SampleStream::kWriteWindow of the last write wait for
// the next one: a config that takes longer is written as it finishes, and the others at the latest
// when the sweep ends.
TEST(Streaming, ConfigsAreWrittenTogetherWithinTheWriteWindow) {
  TempDir dir;
  const std::string prefix = dir.prefix();
  const auto window = kscope::detail::SampleStream::kWriteWindow;
  SimulatedBackend backend;
  Workload w(backend);
  std::vector<std::size_t> progress_seen;
  w.hook = [&](const Config& c, int) {
    if (w.calls_per_config[c.index()] != 1) return;
    progress_seen.push_back(lines(prefix + "progress.jsonl").size());
    if (c.index() < 2) std::this_thread::sleep_for(window + std::chrono::milliseconds(2));  // configs 1 and 2 are slow
  };
  constexpr std::size_t kConfigs = 200;
  const Results r = profile_with_backend(sweep_of(kConfigs), streamed(prefix), w.body(), backend);
  ASSERT_EQ(progress_seen.size(), kConfigs);
  EXPECT_EQ(progress_seen[1], 1u);  // config 1 took longer than the window: written as it finished
  EXPECT_EQ(progress_seen[2], 2u);
  std::size_t waiting = 0;  // fast configs finished but not yet written when the next one started
  for (std::size_t c = 3; c < kConfigs; ++c) waiting += progress_seen[c] < c;
  EXPECT_GT(waiting, 0u);
  EXPECT_EQ(lines(prefix + "progress.jsonl").size(), kConfigs);  // the end of the sweep writes them
  std::ostringstream expected;
  write_csv(r.samples_table(), expected);
  EXPECT_EQ(read(prefix + "samples.csv"), expected.str());
}

// Quick configs followed by a long one: the quick ones reach the operating system at most
// kWriteWindow after they finished, while the long one still runs (a kill then keeps them).
TEST(Streaming, QuickConfigsAreWrittenWithinTheWriteWindowWhileALongConfigRuns) {
  TempDir dir;
  const std::string prefix = dir.prefix();
  SimulatedBackend backend;
  Workload w(backend);
  std::size_t written_during_the_long_config = 0;
  w.hook = [&](const Config& c, int) {
    if (c.index() != 3 || w.calls_per_config[3] != 1) return;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (lines(prefix + "progress.jsonl").size() < 3 && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(detail::SampleStream::kWriteWindow / 5);
    written_during_the_long_config = lines(prefix + "progress.jsonl").size();
  };
  profile_with_backend(sweep_of(4), streamed(prefix), w.body(), backend);
  EXPECT_EQ(written_during_the_long_config, 3u);
}

TEST(Streaming, ASampleFileThatCannotBeAppendedStopsTheSweepKeepingWhatWasMeasured) {
  TempDir dir;
  const std::string prefix = dir.prefix();
  SimulatedBackend backend;
  Workload w(backend);
  w.hook = [&](const Config& c, int) {
    if (c.index() == 1 && w.calls_per_config[1] == 1) {
      fs::remove(prefix + "samples.csv");
      fs::create_directory(prefix + "samples.csv");
    }
  };
  Settings s = streamed(prefix);
  s.fsync_interval_s = 0;  // each config written as it finishes
  try {
    profile_with_backend(sweep_of(3), s, w.body(), backend);
    FAIL() << "expected SweepError";
  } catch (const SweepError& e) {
    EXPECT_NE(std::string(e.what()).find("config 2/3 (n=2, dtype=f32) failed in writing its samples under"),
              std::string::npos)
        << e.what();
    EXPECT_EQ(e.partial_results().rows().size(), 2u);  // config 2 was measured: it is kept
  }
}

TEST(Resume, AfterAFailureOnlyTheMissingConfigsRunAndTheTableIsTheUninterruptedOne) {
  TempDir dir;
  const std::string prefix = dir.prefix();
  {
    SimulatedBackend backend;
    Workload w(backend);
    w.hook = [](const Config& c, int) {
      if (c.index() == 3) throw std::runtime_error("out of memory");
    };
    EXPECT_THROW(profile_with_backend(sweep_of(6), streamed(prefix), w.body(), backend), SweepError);
  }
  SimulatedBackend backend;
  Workload w(backend);
  Settings s = streamed(prefix);
  s.resume = true;
  const Results r = profile_with_backend(sweep_of(6), s, w.body(), backend);
  EXPECT_EQ(w.calls, 3 * static_cast<int>(kRuns + kWarmups));
  EXPECT_EQ(w.calls_per_config.count(0), 0u);
  expect_same_tables(r, uninterrupted(6));
  EXPECT_EQ(lines(prefix + "progress.jsonl").size(), 6u);
  std::ostringstream expected;
  write_csv(r.samples_table(), expected);
  EXPECT_EQ(read(prefix + "samples.csv"), expected.str());
}

// Issue 42: Slurm starts a requeued job again (preemption, a node failure, scontrol requeue) with
// SLURM_RESTART_COUNT=1; the sweep its first start left under the prefix was refused, so the job
// failed where it should have continued.
TEST(Resume, AJobSlurmStartedAgainContinuesItsSweepUnasked) {
  TempDir dir;
  const std::string prefix = dir.prefix();
  const auto measure = [&](Settings s, int fail_at = -1) {
    int calls = 0;
    s.verbosity = Verbosity::info;
    ::testing::internal::CaptureStderr();
    std::optional<Results> r;
    try {
      r = measure_failing_at(sweep_of(6), s, false, fail_at, &calls);
    } catch (const Error&) {
      ::testing::internal::GetCapturedStderr();
      throw;
    }
    return std::tuple{*r, calls, ::testing::internal::GetCapturedStderr()};
  };
  const kscope_test::ScopedEnv first_start("SLURM_RESTART_COUNT", std::nullopt);
  EXPECT_THROW(measure(streamed(prefix), 3), SweepError);  // 3 of 6 configs on disk
  {
    const kscope_test::ScopedEnv restarted("SLURM_RESTART_COUNT", "1");
    const auto [r, calls, said] = measure(streamed(prefix));
    EXPECT_EQ(calls, 3 * static_cast<int>(kRuns + kWarmups));  // configs 4 to 6 only
    expect_same_tables(r, uninterrupted(6));
    EXPECT_NE(said.find("SLURM_RESTART_COUNT=1: Slurm started this job again, so it continues the sweep under '" +
                        prefix + "' (as Settings::resume = true does)"),
              std::string::npos)
        << said;
    EXPECT_NE(said.find("': 3 of 6 configs were measured before; measuring the other 3"), std::string::npos) << said;
    // Asked to start over, it does.
    Settings replace = streamed(prefix);
    replace.overwrite = true;
    EXPECT_EQ(std::get<1>(measure(replace)), 6 * static_cast<int>(kRuns + kWarmups));
  }
  // A job that was not restarted moves the finished sweep aside, as any process does.
  const kscope_test::ScopedEnv not_restarted("SLURM_RESTART_COUNT", "0");
  EXPECT_EQ(std::get<1>(measure(streamed(prefix))), 6 * static_cast<int>(kRuns + kWarmups));
  EXPECT_TRUE(fs::exists(prefix + "results.json.~1~"));
}

TEST(Resume, DeclaredWorkIsAskedAgainForTheConfigsReadBack) {
  TempDir dir;
  const std::string prefix = dir.prefix();
  Settings s = streamed(prefix);
  std::vector<std::size_t> asked;
  s.work = [&asked](const Config& c) {
    asked.push_back(c.index());
    return Work{1e3 * static_cast<double>(c.get<std::int64_t>("n")), 0, {}};
  };
  {
    SimulatedBackend backend;
    Workload w(backend);
    w.hook = [](const Config& c, int) {
      if (c.index() == 2) throw std::runtime_error("out of memory");
    };
    EXPECT_THROW(profile_with_backend(sweep_of(4), s, w.body(), backend), SweepError);
  }
  EXPECT_EQ(asked, (std::vector<std::size_t>{0, 1}));
  asked.clear();
  SimulatedBackend backend;
  Workload w(backend);
  s.resume = true;
  const Results r = profile_with_backend(sweep_of(4), s, w.body(), backend);
  EXPECT_EQ(asked, (std::vector<std::size_t>{0, 1, 2, 3}));  // 0 and 1 from disk, 2 and 3 measured
  expect_same_tables(r, uninterrupted(4, s));
  for (const auto& row : r.rows()) EXPECT_TRUE(row.roofline.bound) << row.config_index;
}

TEST(Resume, AKilledChildLosesAtMostTheConfigInFlight) {
  TempDir dir;
  const std::string prefix = dir.prefix();
  constexpr int kConfigs = 40;
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {  // a long sweep, never finished: the parent kills it
    SimulatedBackend backend;
    Workload w(backend);
    w.hook = [](const Config&, int) { std::this_thread::sleep_for(std::chrono::milliseconds(5)); };
    try {
      profile_with_backend(sweep_of(kConfigs), streamed(prefix), w.body(), backend);
    } catch (...) {
    }
    _exit(0);
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (lines(prefix + "progress.jsonl").size() < 5 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  kill(child, SIGKILL);
  int status = 0;
  waitpid(child, &status, 0);
  ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << "the sweep ended before it was killed";

  // On disk: every finished config's samples, in whole lines.
  const std::size_t done = lines(prefix + "progress.jsonl").size();
  ASSERT_GE(done, 5u);
  ASSERT_LT(done, static_cast<std::size_t>(kConfigs));
  const std::string samples = read(prefix + "samples.csv");
  EXPECT_EQ(samples.back(), '\n');
  const std::size_t rows = lines(prefix + "samples.csv").size() - 1;
  EXPECT_GE(rows, done * kRowsPerConfig);
  EXPECT_LE(rows, (done + 1) * kRowsPerConfig);  // the config in flight may be there, unacknowledged
  EXPECT_FALSE(fs::exists(prefix + "summary.csv"));

  // Resumed: only the configs not finished run, and the table is the uninterrupted one.
  SimulatedBackend backend;
  Workload w(backend);
  Settings s = streamed(prefix);
  s.resume = true;
  const Results r = profile_with_backend(sweep_of(kConfigs), s, w.body(), backend);
  EXPECT_EQ(w.calls, static_cast<int>((kConfigs - done) * (kRuns + kWarmups)));
  EXPECT_EQ(w.calls_per_config.begin()->first, done);
  expect_same_tables(r, uninterrupted(kConfigs));
}

TEST(Resume, HalfWrittenLastLinesAreDropped) {
  TempDir dir;
  const std::string prefix = dir.prefix();
  {
    SimulatedBackend backend;
    Workload w(backend);
    w.hook = [](const Config& c, int) {
      if (c.index() == 2) throw std::runtime_error("stop");
    };
    EXPECT_THROW(profile_with_backend(sweep_of(4), streamed(prefix), w.body(), backend), SweepError);
  }
  // As a kill in the middle of the appends would leave them: config 3's samples cut inside a quoted
  // field, and its progress line cut short.
  std::ofstream(prefix + "samples.csv", std::ios::app) << "k,3,f32,0,test__kernel_duration,ns,300,\"kern";
  std::ofstream(prefix + "progress.jsonl", std::ios::app) << R"({"config":2,"samples":3,"conv)";
  SimulatedBackend backend;
  Workload w(backend);
  Settings s = streamed(prefix);
  s.resume = true;
  const Results r = profile_with_backend(sweep_of(4), s, w.body(), backend);
  EXPECT_EQ(w.calls, 2 * static_cast<int>(kRuns + kWarmups));
  expect_same_tables(r, uninterrupted(4));
  EXPECT_EQ(lines(prefix + "progress.jsonl").size(), 4u);
}

TEST(Resume, SamplesMissingFromTheFileAreMeasuredAgain) {
  TempDir dir;
  const std::string prefix = dir.prefix();
  {
    SimulatedBackend backend;
    Workload w(backend);
    profile_with_backend(sweep_of(3), streamed(prefix), w.body(), backend);
  }
  // All but the first of the last config's samples lost (e.g. the file restored from an older
  // copy): the one left is not kept either.
  auto kept = lines(prefix + "samples.csv");
  kept.resize(kept.size() - kRowsPerConfig + 1);
  std::ofstream out(prefix + "samples.csv");
  for (const auto& l : kept) out << l << "\n";
  out.close();
  SimulatedBackend backend;
  Workload w(backend);
  Settings s = streamed(prefix);
  s.resume = true;
  s.verbosity = Verbosity::info;
  ::testing::internal::CaptureStderr();
  const Results r = profile_with_backend(sweep_of(3), s, w.body(), backend);
  const std::string log = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(log.find("the configs from there on are measured again"), std::string::npos) << log;
  EXPECT_EQ(w.calls_per_config.size(), 1u);
  EXPECT_EQ(w.calls_per_config.count(2), 1u);
  expect_same_tables(r, uninterrupted(3));
}

TEST(Resume, AFinishedSweepMeasuresNothingAndNothingOnDiskMeasuresEverything) {
  TempDir dir;
  const std::string prefix = dir.prefix();
  SimulatedBackend backend;
  Workload w(backend);
  Settings s = streamed(prefix);
  s.resume = true;  // nothing there yet: every config is measured
  profile_with_backend(sweep_of(3), s, w.body(), backend);
  EXPECT_EQ(w.calls, 3 * static_cast<int>(kRuns + kWarmups));
  SimulatedBackend again;
  Workload w2(again);
  const Results r = profile_with_backend(sweep_of(3), s, w2.body(), again);
  EXPECT_EQ(w2.calls, 0);
  expect_same_tables(r, uninterrupted(3));
}

TEST(Resume, ResumingASweepHoldsAboutWhatMeasuringItHeld) {
  // 10^6 samples: read back whole before any was checked, they took 1.5 GB to resume (40 times
  // what measuring them holds); read a record at a time, about as much as measuring.
  TempDir dir;
  const std::string prefix = dir.prefix();
  constexpr int kConfigs = 1000;
  constexpr std::size_t kManyRuns = 1000;
  Settings s = streamed(prefix);
  s.runs = kManyRuns;
  s.warmup_runs = 0;
  const auto sweep = [&](bool resume) {
    return [&, resume] {
      SimulatedBackend backend;
      Workload w(backend);
      Settings settings = s;
      settings.resume = resume;
      const Results r = profile_with_backend(sweep_of(kConfigs), settings, w.body(), backend);
      return r.samples().size() == kConfigs * kManyRuns && (w.calls == 0) == resume;
    };
  };
  const double measuring = peak_growth_in_child(sweep(false));
  ASSERT_TRUE(std::isfinite(measuring)) << "the sweep failed";
  const double resuming = peak_growth_in_child(sweep(true));
  ASSERT_TRUE(std::isfinite(resuming)) << "the resumed sweep failed or measured again";
  constexpr double MB = 1 << 20;
  EXPECT_LT(resuming, 2 * measuring) << "resuming " << resuming / MB << " MB, measuring " << measuring / MB << " MB";
}

TEST(Resume, DerivedValuesAndAdaptiveOutcomesComeBackFromDisk) {
  TempDir dir;
  const std::string prefix = dir.prefix();
  Settings s = streamed(prefix);
  s.sampling = Sampling::adaptive;
  s.adaptive.min_runs = 3;
  s.adaptive.max_runs = 6;
  int derived_calls = 0;
  s.derive_metric = [&](const MeasuredValues& v, const Config&) {
    ++derived_calls;
    return std::vector<DerivedValue>{{"bandwidth", 1e6 / v.front(), "B/s"}};
  };
  const auto run = [&](bool resume, int fail_at) { return measure_failing_at(sweep_of(4), s, resume, fail_at); };
  EXPECT_THROW(run(false, 2), SweepError);
  derived_calls = 0;
  const Results resumed = run(true, -1);
  const int derived_after_resume = derived_calls;
  Settings plain = s;
  plain.output_prefix.clear();
  SimulatedBackend backend;
  Workload w(backend);
  const Results whole = profile_with_backend(sweep_of(4), plain, w.body(), backend);
  expect_same_tables(resumed, whole);
  EXPECT_EQ(resumed.at("k", "bandwidth", 0).stats.count, whole.at("k", "bandwidth", 0).stats.count);
  EXPECT_EQ(resumed.at("k", "test__kernel_duration", 1).converged, whole.at("k", "test__kernel_duration", 1).converged);
  EXPECT_LT(derived_after_resume, derived_calls - derived_after_resume);  // configs 1 and 2 were not derived again
}

TEST(Resume, ADifferentSessionIsRefusedNamingEveryDifference) {
  TempDir dir;
  const std::string prefix = dir.prefix();
  {
    SimulatedBackend backend;
    Workload w(backend);
    profile_with_backend(sweep_of(3), streamed(prefix), w.body(), backend);
  }
  const auto refusal = [&](const Sweep& sweep, Settings s) {
    s.resume = true;
    SimulatedBackend backend;
    Workload w(backend);
    try {
      profile_with_backend(sweep, s, w.body(), backend);
    } catch (const ConfigError& e) {
      EXPECT_EQ(w.calls, 0);
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  Settings s = streamed(prefix);
  s.runs = 5;
  s.cache_control = CacheControl::none;
  std::string message = refusal(sweep_of(3), s);
  EXPECT_NE(message.find("cannot resume the sweep under '" + prefix + "': it was measured differently ("),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("Settings::cache_control: \"all\" on disk, \"none\" now"), std::string::npos) << message;
  EXPECT_NE(message.find("Settings::runs: 3 on disk, 5 now"), std::string::npos) << message;
  EXPECT_NE(message.find("start it over with Settings::overwrite = true instead of Settings::resume"), std::string::npos)
      << message;

  message = refusal(sweep_of(4), streamed(prefix));
  EXPECT_NE(message.find("the sweep: 3 configs over ['n', 'dtype'] on disk, 4 over ['n', 'dtype'] now"),
            std::string::npos)
      << message;
  message = refusal(Sweep().axis("n", {1, 2, 4}).axis("dtype", {"f32"}), streamed(prefix));
  EXPECT_NE(message.find("config 3 of the sweep: (n=3, dtype=f32) on disk, (n=4, dtype=f32) now"), std::string::npos)
      << message;
  // Typed: 1.0 is not 1.
  message = refusal(Sweep().axis("n", {1.0, 2.0, 3.0}).axis("dtype", {"f32"}), streamed(prefix));
  EXPECT_NE(message.find("config 1 of the sweep"), std::string::npos) << message;
  s = streamed(prefix);
  s.derive_metric = [](const MeasuredValues&, const Config&) { return std::vector<DerivedValue>{}; };
  message = refusal(sweep_of(3), s);
  EXPECT_NE(message.find("Settings::derive_metric: not set on disk, set now"), std::string::npos) << message;
  // What only shapes the statistics may change.
  s = streamed(prefix);
  s.normalize_against = "k";
  s.stable_rsd_pct = 5;
  EXPECT_EQ(refusal(sweep_of(3), s), "accepted");
  // And what this sweep does not use: adaptive sampling's settings, the energy window, and the
  // declared work (without the energy metrics it feeds only the summary's roofline).
  s = streamed(prefix);
  s.adaptive.target_pct = 7;
  s.energy_window_s = 2;
  s.work = [](const Config&) { return Work{.bytes = 1e6}; };
  EXPECT_EQ(refusal(sweep_of(3), s), "accepted");
}

TEST(Resume, AManifestOfAnOlderLayoutIsRefusedNamingTheFix) {
  TempDir dir;
  const std::string prefix = dir.prefix();
  measure_failing_at(sweep_of(2), streamed(prefix), false, -1);
  std::string manifest = read(prefix + "manifest.json");
  const auto version = manifest.find("\"manifest_version\"");
  ASSERT_NE(version, std::string::npos);
  manifest.erase(version, manifest.find('\n', version) - version + 1);
  std::ofstream(prefix + "manifest.json") << manifest;
  Settings s = streamed(prefix);
  s.resume = true;
  SimulatedBackend backend;
  Workload w(backend);
  const std::string message = kscope_test::error_of([&] { profile_with_backend(sweep_of(2), s, w.body(), backend); });
  EXPECT_NE(message.find("cannot resume from '" + prefix + "manifest.json': it was written by kscope "), std::string::npos)
      << message;
  EXPECT_NE(message.find("finish the sweep with that kscope, or start the sweep over with Settings::overwrite = true"),
            std::string::npos)
      << message;
}

TEST(Resume, NeedsAnOutputPrefixAndAnInProcessBackend) {
  Settings s;
  s.resume = true;
  try {
    s.validate();
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("Settings::resume continues the sweep streamed under Settings::output_prefix, "
                                         "which is not set"),
              std::string::npos)
        << e.what();
  }
  s.output_prefix = "/tmp/x_";
  s.backend = Backend::ncu;
  EXPECT_THROW(s.validate(), ConfigError);
}

TEST(Streaming, TheFsyncIntervalIsZeroOrSeconds) {
  Settings s;
  for (double bad : {-1.0, std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity()}) {
    s.fsync_interval_s = bad;
    EXPECT_EQ(kscope_test::error_of([&] { s.validate(); }),
              "Settings::fsync_interval_s must be 0 (flush after every config) or a number of seconds (the default "
              "is 1.0)");
  }
  s.fsync_interval_s = 0;
  EXPECT_NO_THROW(s.validate());
}

TEST(Interrupt, SigintStopsTheSweepAtTheEndOfTheRunKeepingEverythingAndRestoringClocks) {
  TempDir dir;
  const std::string prefix = dir.prefix();
  SimulatedBackend backend;
  Workload w(backend);
  Settings s = streamed(prefix);
  s.clock_control = ClockControl::base;
  constexpr int kAtCall = 10;  // config 3, warm-up done, its first recorded run
  bool locked_after_signal = false;
  w.hook = [&](const Config&, int call) {
    if (call != kAtCall) return;
    std::raise(SIGINT);
    locked_after_signal = backend.device().clocks_locked();  // the run goes on as it started
  };
  struct sigaction before {};
  sigaction(SIGINT, nullptr, &before);
  try {
    profile_with_backend(sweep_of(5), s, w.body(), backend);
    FAIL() << "expected SweepInterrupted";
  } catch (const Error&) {
    FAIL() << "SweepInterrupted must not be a kscope::Error";
  } catch (const SweepInterrupted& e) {
    EXPECT_NE(std::string(e.what()).find("sweep interrupted (Ctrl-C, SIGINT) in config 3/5 (n=3, dtype=f32) after run 1"),
              std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("kept in SweepInterrupted::partial_results() and written to " + prefix),
              std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("run the sweep again with Settings::resume = true"), std::string::npos);
    EXPECT_EQ(e.interrupted_config(), "n=3, dtype=f32");
    EXPECT_EQ(e.partial_results().samples().size(), 2 * kRuns + 1);  // the run in progress is kept
  }
  EXPECT_EQ(w.calls, kAtCall);
  EXPECT_TRUE(locked_after_signal);
  EXPECT_FALSE(backend.device().clocks_locked());
  EXPECT_EQ(backend.device().restore_count(), 1u);
  struct sigaction after {};
  sigaction(SIGINT, nullptr, &after);
  EXPECT_EQ(after.sa_handler, before.sa_handler);
  EXPECT_TRUE(fs::exists(prefix + "summary.csv") && fs::exists(prefix + "results.json"));
  EXPECT_EQ(lines(prefix + "progress.jsonl").size(), 2u);

  // Resumed, it measures config 3 from its start, then the rest.
  SimulatedBackend again;
  Workload w2(again);
  s.resume = true;
  const Results r = profile_with_backend(sweep_of(5), s, w2.body(), again);
  EXPECT_EQ(w2.calls, 3 * static_cast<int>(kRuns + kWarmups));
  expect_same_tables(r, uninterrupted(5, s));
}

TEST(Interrupt, ASigintBetweenConfigsStopsBeforeTheNext) {
  SimulatedBackend backend;
  Workload w(backend);
  Settings s = streamed("");
  w.hook = [&](const Config&, int call) {
    if (call == static_cast<int>(kRuns + kWarmups)) std::raise(SIGINT);  // the last run of config 1
  };
  try {
    profile_with_backend(sweep_of(3), s, w.body(), backend);
    FAIL() << "expected SweepInterrupted";
  } catch (const SweepInterrupted& e) {
    EXPECT_NE(std::string(e.what()).find("sweep interrupted (Ctrl-C, SIGINT) before config 2/3 (n=2, dtype=f32)"),
              std::string::npos)
        << e.what();
    EXPECT_EQ(e.interrupted_config(), "");
    EXPECT_EQ(e.partial_results().rows().size(), 1u);
  }
}

TEST(Interrupt, ASecondSigintGoesToTheHandlerThatWasThereBefore) {
  SimulatedBackend backend;
  Workload w(backend);
  static volatile std::sig_atomic_t app_saw_sigint = 0;
  app_saw_sigint = 0;
  auto previous = std::signal(SIGINT, [](int) { app_saw_sigint = 1; });
  w.hook = [&](const Config&, int call) {
    if (call != 2) return;
    std::raise(SIGINT);
    EXPECT_EQ(app_saw_sigint, 0);
    std::raise(SIGINT);
    EXPECT_EQ(app_saw_sigint, 1);
  };
  EXPECT_THROW(profile_with_backend(sweep_of(2), streamed(""), w.body(), backend), SweepInterrupted);
  std::signal(SIGINT, previous);
}

TEST(Resume, InfoCollectorValuesComeBackWithTheirTypes) {
  TempDir dir;
  const std::string prefix = dir.prefix();
  Settings s = streamed(prefix);
  // Text that reads as a number must stay text: the CSV alone would make it one.
  s.info_collectors.push_back({"cuda", CollectionScope::once, [](const CollectionContext&) { return Cell{"12.4"}; }});
  s.info_collectors.push_back({"temp", CollectionScope::run, [](const CollectionContext& c) {
                                 return Cell{static_cast<std::int64_t>(60 + c.run)};
                               }});
  s.info_collectors.push_back({"hot", CollectionScope::annotation, [](const CollectionContext& c) {
                                 return c.run % 2 ? Cell{true} : Cell{};
                               }});
  const auto run = [&](bool resume, int fail_at) { return measure_failing_at(sweep_of(3), s, resume, fail_at); };
  EXPECT_THROW(run(false, 2), SweepError);
  const Results resumed = run(true, -1);
  expect_same_tables(resumed, uninterrupted(3, s));
  EXPECT_EQ(resumed.samples().front().info.front(), Cell{std::string("12.4")});

  Settings other = s;
  other.info_collectors.pop_back();
  other.resume = true;
  SimulatedBackend backend;
  Workload w(backend);
  try {
    profile_with_backend(sweep_of(3), other, w.body(), backend);
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find(R"(Settings::info_collectors: [{"name":"cuda","scope":"once"},{"name":"temp","scope":"run"},{"name":"hot","scope":"annotation"}] )"
                                         R"(on disk, [{"name":"cuda","scope":"once"},{"name":"temp","scope":"run"}] now)"),
              std::string::npos)
        << e.what();
  }
}

// NaN and the infinities, in an info collector's cells and on a config axis, come back from disk
// as the reals they were, not as missing cells or as another sweep's configs.
TEST(Resume, NonFiniteInfoAndConfigValuesComeBack) {
  TempDir dir;
  const std::string prefix = dir.prefix();
  const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  const Sweep sweep = Sweep().axis("n", {1, 2}).axis("limit", {Value(inf), Value(-inf), Value(nan)});
  Settings s = streamed(prefix);
  for (const double v : {nan, inf, -inf})
    s.info_collectors.push_back({"v" + std::to_string(s.info_collectors.size()), CollectionScope::run,
                                 [v](const CollectionContext&) { return Cell{v}; }});
  EXPECT_THROW(measure_failing_at(sweep, s, false, 4), SweepError);
  int calls_after_resume = 0;
  const Results resumed = measure_failing_at(sweep, s, true, -1, &calls_after_resume);
  EXPECT_EQ(calls_after_resume, static_cast<int>(2 * (kWarmups + kRuns)));  // configs 5 and 6 only
  ASSERT_EQ(resumed.samples().size(), 6 * kRuns);
  for (std::size_t i = 0; i < resumed.samples().size(); ++i) {
    const auto& info = resumed.samples()[i].info;
    ASSERT_EQ(info.size(), 3u);
    ASSERT_TRUE(std::holds_alternative<double>(info[0]) && std::holds_alternative<double>(info[1]) &&
                std::holds_alternative<double>(info[2]))
        << "sample " << i;
    EXPECT_TRUE(std::isnan(std::get<double>(info[0])));
    EXPECT_EQ(std::get<double>(info[1]), inf);
    EXPECT_EQ(std::get<double>(info[2]), -inf);
  }
}

TEST(Interrupt, ABatchStopsAfterTheRunInProgressAndKeepsTheRunsBeforeIt) {
  SimulatedBackend backend;
  backend.set_max_batch_runs(8);  // as the cupti backend batches runs
  Workload w(backend);
  constexpr int kAtCall = 3;  // the second recorded run of config 1, inside one batch
  w.hook = [&](const Config&, int call) {
    if (call == kAtCall) std::raise(SIGINT);
  };
  Settings s = streamed("");
  s.runs = 6;
  try {
    profile_with_backend(sweep_of(2), s, w.body(), backend);
    FAIL() << "expected SweepInterrupted";
  } catch (const SweepInterrupted& e) {
    EXPECT_NE(std::string(e.what()).find("in config 1/2 (n=1, dtype=f32) after run 2"), std::string::npos) << e.what();
    EXPECT_EQ(e.partial_results().samples().size(), 2u);
  }
  EXPECT_EQ(w.calls, kAtCall);
}

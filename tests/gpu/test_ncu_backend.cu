// Backend::ncu on a real GPU with the real Nsight Compute: a three-config sweep gives the table
// the other backends give, its gpu__time_duration.sum and the counter backend's are both what the
// profiler may report for the spins (spin_bounds.hpp), and the report opens with `ncu --import`.
// Each test re-runs this program under ncu (ncu 2025.3.1 cannot attach), so the ncu call comes
// first in each test: the re-run child profiles it and exits before anything after it. Skipped,
// saying why, without a GPU or without a usable ncu.
// ncu always runs with --clock-control none here (the default ClockControl::none).
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <string>

#include "gpu_test_support.hpp"
#include "spin_bounds.hpp"
#include "kscope/doctor.hpp"
#include "kscope/kscope.hpp"

namespace {

const std::string kMetric = "gpu__time_duration.sum";

// The doctor's view of ncu: its path, and why it cannot be driven (empty when it can). Only the
// ncu facts, not the Backend::ncu verdict: in the re-run child, which runs under ncu, the verdict
// says "already runs under Nsight Compute", and the child must go on to the profiled call.
kscope::NcuFacts ncu_facts() { return kscope::run_doctor().facts.ncu; }

#define KSCOPE_REQUIRE_NCU()                                                                 \
  do {                                                                                       \
    KSCOPE_REQUIRE_GPU();                                                                    \
    if (const std::string problem = ncu_facts().problem; !problem.empty()) GTEST_SKIP() << problem; \
  } while (0)

kscope::Settings settings_for(kscope::Backend backend) {
  kscope::Settings s;
  s.backend = backend;
  s.runs = 5;
  s.warmup_runs = 1;
  s.metrics = {kMetric};
  s.cache_control = kscope::CacheControl::all;
  s.clock_control = kscope::ClockControl::none;
  s.verbosity = kscope::Verbosity::quiet;
  return s;
}

kscope::Sweep spin_sweep() { return kscope::Sweep().axis("spin_us", {20, 50, 100}); }

void spin_body(const kscope::Config& c) {
  kscope::Annotation region("spin");
  kscope_test::launch_spin(static_cast<std::uint64_t>(c.get<int>("spin_us")) * 1000);
}

}  // namespace

TEST(NcuBackend, ThreeConfigSweepMatchesTheCounterBackendAndTheReportOpens) {
  KSCOPE_REQUIRE_NCU();
  const kscope::Results ncu = kscope::profile(spin_sweep(), settings_for(kscope::Backend::ncu), spin_body);
  const kscope::Results counters = kscope::profile(spin_sweep(), settings_for(kscope::Backend::counters), spin_body);

  EXPECT_EQ(ncu.session().backend, kscope::Backend::ncu);
  EXPECT_EQ(ncu.session().clock_control, kscope::ClockControl::none);
  ASSERT_EQ(ncu.rows().size(), counters.rows().size());
  EXPECT_EQ(ncu.summary_table().columns, counters.summary_table().columns);
  EXPECT_EQ(ncu.samples_table().columns, counters.samples_table().columns);
  EXPECT_EQ(ncu.samples().size(), counters.samples().size());
  for (std::size_t c = 0; c < 3; ++c) {
    const auto& n = ncu.at("spin", kMetric, c);
    const auto& k = counters.at("spin", kMetric, c);
    EXPECT_EQ(n.unit, "ns");
    EXPECT_EQ(n.kernel, kscope_test::kSpinKernel);
    EXPECT_EQ(n.stats.count, 5u);
    // Each against the spin it timed rather than against the other: both report the spin plus
    // the same counter's fixed part, and the configs' spins are 30 us or more apart.
    const double spin_ns = 1000.0 * ncu.configs()[c].get<int>("spin_us");
    EXPECT_TRUE(kscope_test::spin_measured(n.avg_value, spin_ns, kscope_test::kGpuTimeDuration))
        << "ncu, config " << c;
    EXPECT_TRUE(kscope_test::spin_measured(k.avg_value, spin_ns, kscope_test::kGpuTimeDuration))
        << "counters, config " << c;
    std::printf("[ncu vs counters] %s: ncu %.1f ns, counters %.1f ns, ratio %.4f\n",
                ncu.configs()[c].to_string().c_str(), n.avg_value, k.avg_value, n.avg_value / k.avg_value);
  }

  const std::string report = ncu.session().report_path;
  ASSERT_TRUE(std::filesystem::exists(report)) << report;
  const std::string import = "'" + ncu_facts().path + "' --import '" + report + "' --csv --page raw > /dev/null";
  EXPECT_EQ(std::system(import.c_str()), 0) << import;
  std::printf("[ncu report] %s\n", report.c_str());
  std::cout << ncu;
}

TEST(NcuBackend, RangeReplayGivesOneValuePerRegion) {
  KSCOPE_REQUIRE_NCU();
  kscope::Settings s = settings_for(kscope::Backend::ncu);
  s.replay_mode = kscope::ReplayMode::range;
  const kscope::Results r = kscope::profile(kscope::Sweep().axis("spin_us", {20, 40}), s, [](const kscope::Config& c) {
    kscope::Annotation region("two_spins");
    const auto ns = static_cast<std::uint64_t>(c.get<int>("spin_us")) * 1000;
    kscope_test::launch_spin(ns);
    kscope_test::launch_spin(ns);
  });
  ASSERT_EQ(r.rows().size(), 2u);
  // One range covers both kernels: at least their two spins, less a %globaltimer tick each (the
  // launches between them leave no upper bound).
  EXPECT_GE(r.at("two_spins", kMetric, 0).avg_value, 2 * (20'000 - kscope_test::kGlobalTimerTickNs));
  EXPECT_GE(r.at("two_spins", kMetric, 1).avg_value, 2 * (40'000 - kscope_test::kGlobalTimerTickNs));
  std::cout << r;
}

TEST(NcuBackend, UnknownMetricIsReportedNotSilentlyNaN) {
  KSCOPE_REQUIRE_NCU();
  kscope::Settings s = settings_for(kscope::Backend::ncu);
  s.metrics = {kMetric, "bogus__metric.sum"};
  try {
    kscope::profile(kscope::Sweep().axis("spin_us", {20}), s, spin_body);
    FAIL() << "an unknown metric was accepted";
  } catch (const kscope::BackendError& e) {
    EXPECT_NE(std::string(e.what()).find("bogus__metric.sum"), std::string::npos) << e.what();
    std::printf("[unknown metric message] %s\n", e.what());
  }
}

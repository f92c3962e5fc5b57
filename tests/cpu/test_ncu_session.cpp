// Backend::ncu's sessions without a GPU. The child side (ChildBackend) runs through the real
// engine, and the parent aggregates ncu's kernels by the child's regions; end to end, this test program itself is re-run
// under data/ncu/fake_ncu.sh, a stand-in for ncu that runs the program as ncu would and answers
// the report import with recorded exports (3 configs x 2 runs of annotation "saxpy").
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <optional>

#include "backends/ncu/child_backend.hpp"
#include "backends/ncu/child_manifest.hpp"
#include "backends/ncu/parent_session.hpp"
#include "kscope/annotation.hpp"
#include "kscope/errors.hpp"
#include "kscope/profile.hpp"
#include "test_support.hpp"

using namespace kscope;
using namespace kscope::ncu;
using kscope_test::error_of;
using kscope_test::quiet;
using kscope_test::ScopedEnv;
namespace fs = std::filesystem;

namespace {

const std::string kFakeNcu = std::string(KSCOPE_NCU_TEST_DATA) + "/fake_ncu.sh";
const std::string kKernel = "void saxpy<float>(int, float, const float *, float *)";

bool in_ncu_child() { return std::getenv("KSCOPE_NCU_TARGET") != nullptr; }

// A fresh directory removed at the end of the test. In the re-run child (which ends with _Exit,
// running no destructor) it is the parent's directory, where the child's manifest goes.
struct TempDir {
  fs::path path;
  TempDir() {
    if (in_ncu_child()) {
      path = fs::path(std::getenv("KSCOPE_NCU_MANIFEST")).parent_path();
      return;
    }
    std::string pattern = (fs::temp_directory_path() / "kscope-test-XXXXXX").string();
    path = mkdtemp(pattern.data());
  }
  ~TempDir() {
    if (!in_ncu_child()) fs::remove_all(path);
  }
};

Settings ncu_settings(const TempDir& dir) {
  Settings s = quiet(2);
  s.backend = Backend::ncu;
  s.output_prefix = (dir.path / "e2e_").string();
  return s;
}

Sweep saxpy_sweep() { return Sweep().axis("n", {1024, 2048, 4096}); }

void saxpy_body(const Config&) { Annotation a("saxpy"); }

}  // namespace

TEST(NcuChildBackend, RecordsTheRegionsOfRecordedRunsOnly) {
  ChildBackend backend({"gpu__time_duration.sum"});
  profile_with_backend(saxpy_sweep(), quiet(2), [](const Config& c) {
    {
      Annotation a("first");
      if (c.index() == 1) a.mark_failed("skipped for n=2048");
    }
    Annotation b("second");
  }, backend);
  const ChildManifest& m = backend.manifest();
  ASSERT_EQ(m.runs.size(), 6u);  // 3 configs x 2 recorded runs; warm-ups are not recorded
  EXPECT_EQ(m.runs[0].config, 0u);
  EXPECT_EQ(m.runs[0].run, 0u);
  EXPECT_EQ(m.runs[1].run, 1u);
  EXPECT_EQ(m.runs[5].config, 2u);
  ASSERT_EQ(m.runs[2].regions.size(), 2u);
  EXPECT_EQ(m.runs[2].regions[0].name, "first");
  EXPECT_TRUE(m.runs[2].regions[0].failed);
  EXPECT_EQ(m.runs[2].regions[0].reason, "skipped for n=2048");
  EXPECT_EQ(m.runs[2].regions[1].name, "second");
  EXPECT_FALSE(m.runs[0].regions[0].failed);
}

TEST(NcuReport, AppliesTheEngineRulesToTheKernelsNcuMeasured) {
  ChildManifest m;
  std::vector<RunKernels> kernels;
  for (std::size_t r = 0; r < 2; ++r) {
    m.runs.push_back({0, r, {{"copy", false, ""}, {"gemm", r == 1, "oom"}}});
    kernels.push_back({{{"memset_kernel", {10.0}}, {"copy_kernel", {100.0 + r}}}, {{"gemm_kernel", {500.0}}}});
  }
  SessionInfo info;
  info.backend = Backend::ncu;
  info.clock_control = ClockControl::base;  // ncu held the clocks
  info.report_path = "/tmp/r.ncu-rep";
  Settings s = quiet(2);
  s.ignore_kernel_list = {"memset_kernel"};
  const Results r =
      results_from_report(Sweep().axis("n", {1}), s, info, {{"gpu__time_duration.sum", "ns", ""}}, m, kernels);
  EXPECT_EQ(r.session().backend, Backend::ncu);
  EXPECT_EQ(r.session().report_path, "/tmp/r.ncu-rep");
  EXPECT_EQ(r.session().clock_control, ClockControl::base);
  EXPECT_DOUBLE_EQ(r.at("copy", "gpu__time_duration.sum", 0).avg_value, 100.5);
  EXPECT_EQ(r.at("copy", "gpu__time_duration.sum", 0).kernel, "copy_kernel");
  EXPECT_EQ(r.at("gemm", "gpu__time_duration.sum", 0).stats.count, 1u);  // run 2 failed: NaN, not counted
}

TEST(NcuSession, ReRunsThisProgramUnderNcuAndReturnsTheReportAsResults) {
  TempDir dir;
  ScopedEnv env({{"KSCOPE_NCU", kFakeNcu}, {"FAKE_NCU_REPORT", "saxpy"}, {"FAKE_NCU_MODE", std::nullopt}});
  // An earlier profile() call: in the child it must return empty results without running.
  try {
    Settings events = quiet(2);
    events.backend = Backend::events;
    const Results early = profile(Sweep().axis("m", {1}), events, [](const Config&) {
      if (in_ncu_child()) std::_Exit(42);  // the body of a non-target call ran in the child
    });
    if (in_ncu_child() && !early.empty()) std::_Exit(43);
  } catch (const Error&) {
    // No GPU in the parent here: the events backend cannot run, which is not what this test checks.
  }

  const Results r = profile(saxpy_sweep(), ncu_settings(dir), saxpy_body);
  const std::string report = (dir.path / "e2e_ncu_report.ncu-rep").string();
  EXPECT_EQ(r.session().backend, Backend::ncu);
  EXPECT_EQ(r.session().report_path, report);
  EXPECT_TRUE(fs::exists(report));
  EXPECT_EQ(r.session().gpu, "NVIDIA H200");
  EXPECT_EQ(r.session().host, "gpu-h200-01");
  EXPECT_EQ(r.session().clock_control, ClockControl::none);
  EXPECT_EQ(r.session().cache_control, CacheControl::all);
  EXPECT_DOUBLE_EQ(r.session().rated_sm_clock_mhz, 1980.0);
  ASSERT_EQ(r.rows().size(), 3u);
  EXPECT_EQ(r.rows()[0].metric, "gpu__time_duration.sum");
  EXPECT_EQ(r.rows()[0].unit, "ns");
  EXPECT_EQ(r.rows()[0].kernel, kKernel);
  EXPECT_DOUBLE_EQ(r.at("saxpy", "gpu__time_duration.sum", 0).avg_value, (1234.5 + 1236.0) / 2);
  EXPECT_DOUBLE_EQ(r.at("saxpy", "gpu__time_duration.sum", 2).avg_value, (4936.0 + 4940.0) / 2);
  EXPECT_EQ(r.samples().size(), 6u);
  EXPECT_TRUE(fs::exists(dir.path / "e2e_summary.csv"));
  EXPECT_TRUE(fs::exists(dir.path / "e2e_ncu.log"));
  const auto manifest = read_manifest((dir.path / "e2e_ncu_manifest.json").string());
  ASSERT_TRUE(manifest);
  EXPECT_EQ(manifest->runs.size(), 6u);
}

TEST(NcuSession, PermissionErrorInTheLogNamesTheFixAndTheLog) {
  TempDir dir;
  ScopedEnv env({{"KSCOPE_NCU", kFakeNcu}, {"FAKE_NCU_MODE", "permission"}});
  const std::string e = error_of<BackendError>([&] { profile(saxpy_sweep(), ncu_settings(dir), saxpy_body); });
  EXPECT_NE(e.find("ERR_NVGPUCTRPERM"), std::string::npos) << e;
  EXPECT_NE(e.find((dir.path / "e2e_ncu.log").string()), std::string::npos) << e;
  EXPECT_NE(e.find("NVreg_RestrictProfilingToAdminUsers=0"), std::string::npos) << e;
}

TEST(NcuSession, TooOldOrMissingNcuIsRefusedBeforeAnythingRuns) {
  TempDir dir;
  {
    ScopedEnv env({{"KSCOPE_NCU", kFakeNcu}, {"FAKE_NCU_MODE", "too_old"}});
    const std::string e = error_of<BackendError>([&] { profile(saxpy_sweep(), ncu_settings(dir), saxpy_body); });
    EXPECT_NE(e.find("ncu 2024.1.0.0"), std::string::npos) << e;
    EXPECT_NE(e.find("older than 2025.3.1.0"), std::string::npos) << e;
  }
  ScopedEnv env({{"KSCOPE_NCU", "/nonexistent/ncu"}, {"FAKE_NCU_MODE", std::nullopt}});
  const std::string e = error_of<BackendError>([&] { profile(saxpy_sweep(), ncu_settings(dir), saxpy_body); });
  EXPECT_NE(e.find("KSCOPE_NCU=/nonexistent/ncu is not an executable"), std::string::npos) << e;
  EXPECT_FALSE(fs::exists(dir.path / "e2e_ncu.log"));
}

TEST(NcuSession, UnknownMetricThatNcuReportsAsNaIsAnError) {
  TempDir dir;
  ScopedEnv env({{"KSCOPE_NCU", kFakeNcu}, {"FAKE_NCU_REPORT", "bogus_metric"}, {"FAKE_NCU_MODE", std::nullopt}});
  Settings s = ncu_settings(dir);
  s.metrics = {"bogus__metric.sum"};
  const std::string e = error_of<BackendError>([&] { profile(saxpy_sweep(), s, saxpy_body); });
  EXPECT_NE(e.find("'bogus__metric.sum' as \"n/a\""), std::string::npos) << e;
  EXPECT_NE(e.find("e2e_ncu_report.ncu-rep"), std::string::npos) << e;
}

TEST(NcuSession, LostKernelIsAKernelCountMismatch) {
  TempDir dir;
  ScopedEnv env({{"KSCOPE_NCU", kFakeNcu}, {"FAKE_NCU_REPORT", "lost_kernel"}, {"FAKE_NCU_MODE", std::nullopt}});
  const std::string e = error_of<BackendError>([&] { profile(saxpy_sweep(), ncu_settings(dir), saxpy_body); });
  EXPECT_NE(e.find("kernel count mismatch"), std::string::npos) << e;
}

TEST(NcuSession, NoReportMeansNoKernelWasProfiled) {
  TempDir dir;
  ScopedEnv env({{"KSCOPE_NCU", kFakeNcu}, {"FAKE_NCU_MODE", "no_report"}});
  const std::string e = error_of<BackendError>([&] { profile(saxpy_sweep(), ncu_settings(dir), saxpy_body); });
  EXPECT_NE(e.find("wrote no report"), std::string::npos) << e;
}

TEST(NcuSession, SweepThatChangesInTheReRunIsRefused) {
  TempDir dir;
  ScopedEnv env({{"KSCOPE_NCU", kFakeNcu}, {"FAKE_NCU_MODE", std::nullopt}});
  const Sweep sweep = in_ncu_child() ? Sweep().axis("n", {1, 2}) : Sweep().axis("n", {1, 2, 3});
  const std::string e = error_of<ConfigError>([&] { profile(sweep, ncu_settings(dir), saxpy_body); });
  EXPECT_NE(e.find("another sweep or other settings"), std::string::npos) << e;
  EXPECT_NE(e.find("e2e_ncu_program.log"), std::string::npos) << e;
}

TEST(NcuSession, BodyFailureInTheChildIsASweepErrorNamingTheConfig) {
  TempDir dir;
  ScopedEnv env({{"KSCOPE_NCU", kFakeNcu}, {"FAKE_NCU_MODE", std::nullopt}});
  try {
    profile(saxpy_sweep(), ncu_settings(dir), [](const Config& c) {
      Annotation a("saxpy");
      if (c.index() == 1) throw AnnotationError("boom in n=2048");
    });
    FAIL() << "no SweepError";
  } catch (const SweepError& e) {
    EXPECT_EQ(e.failed_config(), "n=2048");
    EXPECT_NE(std::string(e.what()).find("boom in n=2048"), std::string::npos) << e.what();
    EXPECT_NE(error_of<AnnotationError>([&] { std::rethrow_exception(e.cause()); }).find("boom"), std::string::npos);
    EXPECT_TRUE(e.partial_results().empty());
  }
}

TEST(NcuSession, AdaptiveSamplingIsRefused) {
  TempDir dir;
  Settings s = ncu_settings(dir);
  s.sampling = Sampling::adaptive;
  EXPECT_NE(error_of<ConfigError>([&] { profile(saxpy_sweep(), s, saxpy_body); }).find("Sampling::fixed"),
            std::string::npos);
}

// Backend::ncu's pieces that need no GPU: ncu version parsing and search, the command lines
// (--clock-control always given), re-run detection for Python, the child's target and manifest,
// and the diagnosis of recorded ncu logs.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "backends/ncu/child_manifest.hpp"
#include "backends/ncu/child_target.hpp"
#include "backends/ncu/ncu_command.hpp"
#include "backends/ncu/ncu_locator.hpp"
#include "backends/ncu/ncu_log.hpp"
#include "backends/ncu/ncu_version.hpp"
#include "backends/ncu/program_command.hpp"
#include "backends/ncu/subprocess.hpp"
#include "kscope/errors.hpp"

using namespace kscope;
using namespace kscope::ncu;
namespace fs = std::filesystem;

namespace {

std::string data(const std::string& name) {
  std::ifstream in(std::string(KSCOPE_NCU_TEST_DATA) + "/" + name);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// A fresh directory under the system's temporary directory, removed at the end of the test.
struct TempDir {
  fs::path path;
  TempDir() {
    std::string pattern = (fs::temp_directory_path() / "kscope-test-XXXXXX").string();
    path = mkdtemp(pattern.data());
  }
  ~TempDir() { fs::remove_all(path); }
};

// An executable shell script at `path` printing `version_line` for --version.
void fake_ncu(const fs::path& path, const std::string& version_line) {
  fs::create_directories(path.parent_path());
  std::ofstream(path) << "#!/bin/sh\necho 'NVIDIA (R) Nsight Compute Command Line Profiler'\necho '" << version_line
                      << "'\n";
  fs::permissions(path, fs::perms::owner_all);
}

NcuSearch search_in(const TempDir& dir) {
  NcuSearch s;
  s.path_variable = (dir.path / "bin").string();
  s.fixed_paths.clear();
  s.install_root = (dir.path / "opt").string();
  return s;
}

bool contains_pair(const std::vector<std::string>& cmd, const std::string& option, const std::string& value) {
  for (std::size_t i = 0; i + 1 < cmd.size(); ++i)
    if (cmd[i] == option && cmd[i + 1] == value) return true;
  return false;
}

}  // namespace

TEST(NcuVersion, ParsesTheVersionLineOfNcu) {
  const auto v = parse_ncu_version(data("ncu_version.txt"));
  ASSERT_TRUE(v);
  EXPECT_EQ(*v, (NcuVersion{2025, 3, 1, 0}));
  EXPECT_EQ(v->to_string(), "2025.3.1.0");
  EXPECT_EQ(*parse_ncu_version("Version 2026.2.1 (build 1)"), (NcuVersion{2026, 2, 1, 0}));
  EXPECT_FALSE(parse_ncu_version("ncu: command not found"));
  EXPECT_EQ(*parse_version_number("2025.3.1"), (NcuVersion{2025, 3, 1, 0}));
  EXPECT_FALSE(parse_version_number("latest"));
}

TEST(NcuVersion, OrdersVersionsAndStatesTheMinimum) {
  EXPECT_LT((NcuVersion{2024, 3, 2, 0}), kMinimumNcuVersion);
  EXPECT_LT((NcuVersion{2025, 3, 0, 9}), kMinimumNcuVersion);
  EXPECT_FALSE((NcuVersion{2025, 3, 1, 0}) < kMinimumNcuVersion);
  EXPECT_GT((NcuVersion{2026, 2, 1, 0}), kMinimumNcuVersion);
  EXPECT_EQ(kMinimumNcuVersion.to_string(), "2025.3.1.0");
}

TEST(NcuLocator, SearchesPathThenFixedPathsThenNewestInstall) {
  TempDir dir;
  fake_ncu(dir.path / "opt" / "2024.3.2" / "ncu", "Version 2024.3.2.0 (build 1) (public-release)");
  fake_ncu(dir.path / "opt" / "2025.3.1" / "ncu", "Version 2025.3.1.0 (build 36398880) (public-release)");
  NcuSearch s = search_in(dir);
  std::vector<std::string> tried;
  EXPECT_EQ(find_ncu(s, &tried), (dir.path / "opt" / "2025.3.1" / "ncu").string());
  EXPECT_EQ(tried.front(), (dir.path / "bin" / "ncu").string());
  fake_ncu(dir.path / "bin" / "ncu", "Version 2025.3.1.0 (build 1)");
  EXPECT_EQ(find_ncu(s), (dir.path / "bin" / "ncu").string());
  s.explicit_path = (dir.path / "opt" / "2024.3.2" / "ncu").string();
  EXPECT_EQ(find_ncu(s), s.explicit_path);
}

TEST(NcuLocator, ProbeAcceptsTheSupportedVersion) {
  TempDir dir;
  fake_ncu(dir.path / "bin" / "ncu", "Version 2025.3.1.0 (build 36398880) (public-release)");
  const NcuProbe p = probe_ncu(search_in(dir));
  EXPECT_EQ(p.problem, "");
  EXPECT_EQ(p.version_line, "Version 2025.3.1.0 (build 36398880) (public-release)");
  EXPECT_EQ(p.version->to_string(), "2025.3.1.0");
}

TEST(NcuLocator, ProbeRejectsMissingTooOldAndBrokenNcu) {
  TempDir dir;
  NcuSearch s = search_in(dir);
  EXPECT_NE(probe_ncu(s).problem.find("was not found on PATH"), std::string::npos);
  s.explicit_path = "/nonexistent/ncu";
  EXPECT_NE(probe_ncu(s).problem.find("KSCOPE_NCU=/nonexistent/ncu is not an executable"), std::string::npos);
  s.explicit_path.clear();
  fake_ncu(dir.path / "bin" / "ncu", "Version 2024.1.0.0 (build 33681293) (public-release)");
  const NcuProbe old = probe_ncu(s);
  EXPECT_NE(old.problem.find("ncu 2024.1.0.0 at"), std::string::npos) << old.problem;
  EXPECT_NE(old.problem.find("older than 2025.3.1.0"), std::string::npos) << old.problem;
  fake_ncu(dir.path / "bin" / "ncu", "garbage");
  EXPECT_NE(probe_ncu(s).problem.find("printed no version"), std::string::npos);
}

TEST(NcuCommand, AlwaysPassesClockControlAndTheSessionOptions) {
  Settings s;
  const auto cmd = profile_command("/usr/local/cuda/bin/ncu", s, "/tmp/d/ncu_report", "/tmp/d/ncu.log",
                                   {"/usr/bin/python3.11", "bench.py", "--size", "1 GB"});
  EXPECT_EQ(cmd.front(), "/usr/local/cuda/bin/ncu");
  EXPECT_TRUE(contains_pair(cmd, "--clock-control", "none"));
  EXPECT_TRUE(contains_pair(cmd, "--cache-control", "all"));
  EXPECT_TRUE(contains_pair(cmd, "--replay-mode", "kernel"));
  EXPECT_TRUE(contains_pair(cmd, "--metrics", "gpu__time_duration.sum"));
  EXPECT_TRUE(contains_pair(cmd, "--nvtx-include", "regex:kscope@.+/"));
  EXPECT_TRUE(contains_pair(cmd, "--log-file", "/tmp/d/ncu.log"));
  EXPECT_TRUE(contains_pair(cmd, "--export", "/tmp/d/ncu_report"));
  EXPECT_NE(std::find(cmd.begin(), cmd.end(), "--nvtx"), cmd.end());
  // The program comes last, unchanged.
  EXPECT_EQ(std::vector<std::string>(cmd.end() - 4, cmd.end()),
            (std::vector<std::string>{"/usr/bin/python3.11", "bench.py", "--size", "1 GB"}));
  EXPECT_EQ(shell_quoted({"a", "1 GB", "it's"}), "a '1 GB' 'it'\\''s'");

  s.cache_control = CacheControl::none;
  s.replay_mode = ReplayMode::range;
  s.metrics = {"gpu__time_duration.sum", "dram__bytes_read.sum"};
  const auto other = profile_command("ncu", s, "r", "l", {"/bin/prog"});
  EXPECT_TRUE(contains_pair(other, "--clock-control", "none"));
  EXPECT_TRUE(contains_pair(other, "--cache-control", "none"));
  EXPECT_TRUE(contains_pair(other, "--replay-mode", "range"));
  EXPECT_TRUE(contains_pair(other, "--metrics", "gpu__time_duration.sum,dram__bytes_read.sum"));
  s.clock_control = ClockControl::base;  // an explicit request, never ncu's silent default
  EXPECT_TRUE(contains_pair(profile_command("ncu", s, "r", "l", {"/bin/prog"}), "--clock-control", "base"));
}

TEST(NcuCommand, SectionsGoIntoTheReportAndOnlyWithTheNcuBackend) {
  Settings s;
  s.backend = Backend::ncu;
  s.ncu_sections = {"SpeedOfLight", "MemoryWorkloadAnalysis"};
  s.validate();
  const auto cmd = profile_command("ncu", s, "r", "l", {"/bin/prog"});
  EXPECT_TRUE(contains_pair(cmd, "--section", "SpeedOfLight"));
  EXPECT_TRUE(contains_pair(cmd, "--section", "MemoryWorkloadAnalysis"));
  EXPECT_EQ(cmd.back(), "/bin/prog");  // options before the program
  s.ncu_sections = {"Speed Of Light"};
  EXPECT_THROW(s.validate(), ConfigError);
  s.ncu_sections = {"SpeedOfLight"};
  s.backend = Backend::counters;
  try {
    s.validate();
    ADD_FAILURE() << "ncu_sections accepted with Backend::counters";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("use Backend::ncu"), std::string::npos) << e.what();
  }
}

TEST(NcuCommand, ImportsTheRawPageInBaseUnitsWithAndWithoutNvtxRenaming) {
  EXPECT_EQ(import_command("ncu", "r.ncu-rep", false),
            (std::vector<std::string>{"ncu", "--import", "r.ncu-rep", "--csv", "--page", "raw", "--print-units", "base",
                                      "--print-kernel-base", "mangled"}));
  const auto renamed = import_command("ncu", "r.ncu-rep", true);
  EXPECT_TRUE(contains_pair(renamed, "--print-nvtx-rename", "kernel"));
  EXPECT_TRUE(contains_pair(renamed, "--print-units", "base"));
}

TEST(NcuProgram, ReadsThisProcessCommandLine) {
  const ProgramCommand p = current_program();
  EXPECT_EQ(p.executable, fs::read_symlink("/proc/self/exe").string());
  EXPECT_EQ(p.command_line().front(), p.executable);
  EXPECT_EQ(rerun_problem(p), "");  // a C++ program can always be re-run
}

TEST(NcuProgram, KeepsTheInvokedPathOfASymlinkedInterpreter) {
  // A venv's bin/python3 -> /usr/bin/python3.12: the child must start as bin/python3.
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("kscope-venv-" + std::to_string(::getpid()));
  fs::create_directories(dir / "bin");
  const std::string exe = fs::read_symlink("/proc/self/exe").string();
  fs::create_symlink(exe, dir / "bin" / "python3");
  EXPECT_EQ(invoked_executable("python3", exe, "/nonexistent:" + (dir / "bin").string()), (dir / "bin" / "python3").string());
  EXPECT_EQ(invoked_executable((dir / "bin" / "python3").string(), exe, ""), (dir / "bin" / "python3").string());
  EXPECT_EQ(invoked_executable("python3", exe, "/nonexistent"), exe);  // not found: the resolved path
  EXPECT_EQ(invoked_executable("/bin/sh", exe, ""), exe);                 // another program: the resolved path
  fs::remove_all(dir);
}

TEST(NcuProgram, PythonScriptsCanBeReRunInteractiveSessionsCannot) {
  const auto problem = [](std::vector<std::string> args) {
    return rerun_problem({"/usr/bin/python3.11", std::move(args)});
  };
  EXPECT_EQ(problem({"bench.py", "--n", "3"}), "");
  EXPECT_EQ(problem({"-u", "-X", "dev", "bench.py"}), "");
  EXPECT_EQ(problem({"-m", "mypkg.bench"}), "");
  EXPECT_EQ(problem({"-Wignore", "-mmypkg"}), "");
  EXPECT_NE(problem({}).find("interactive Python interpreter"), std::string::npos);
  EXPECT_NE(problem({"-c", "import kscope"}).find("-c"), std::string::npos);
  EXPECT_NE(problem({"-i", "bench.py"}).find("interactive"), std::string::npos);
  EXPECT_NE(problem({"-"}).find("stdin"), std::string::npos);
  EXPECT_NE(problem({"-m", "ipykernel_launcher", "-f", "/k.json"}).find("Jupyter kernel"), std::string::npos);
  EXPECT_NE(problem({"/usr/local/bin/ipython"}).find("IPython"), std::string::npos);
  EXPECT_EQ(rerun_problem({"/opt/app/python_tool", {}}), "");  // not an interpreter
}

TEST(NcuChildTarget, RoundTripsThroughTheEnvironmentAndKeysTheSweep) {
  Settings s;
  const Sweep sweep = Sweep().axis("n", {1024, 2048});
  const std::string key = session_key(sweep, s);
  EXPECT_EQ(key.size(), 16u);
  EXPECT_EQ(key, session_key(Sweep().axis("n", {1024, 2048}), s));
  EXPECT_NE(key, session_key(Sweep().axis("n", {1024, 4096}), s));
  Settings more = s;
  more.runs = 11;
  EXPECT_NE(key, session_key(sweep, more));

  // This test rewrites the variables: keep what the process had (it may be an ncu child).
  std::vector<std::pair<std::string, std::string>> saved;
  for (const char* name : {"KSCOPE_NCU_TARGET", "KSCOPE_NCU_MANIFEST"})
    if (const char* value = std::getenv(name)) saved.emplace_back(name, value);
  unsetenv("KSCOPE_NCU_TARGET");
  unsetenv("KSCOPE_NCU_MANIFEST");
  EXPECT_FALSE(child_target_from_environment());
  for (const auto& entry : child_environment({3, key, "/tmp/m.json"})) {
    const std::size_t eq = entry.find('=');
    setenv(entry.substr(0, eq).c_str(), entry.substr(eq + 1).c_str(), 1);
  }
  const auto target = child_target_from_environment();
  ASSERT_TRUE(target);
  EXPECT_EQ(target->ordinal, 3u);
  EXPECT_EQ(target->key, key);
  EXPECT_EQ(target->manifest_path, "/tmp/m.json");
  setenv("KSCOPE_NCU_TARGET", "garbage", 1);
  EXPECT_THROW(child_target_from_environment(), BackendError);
  unsetenv("KSCOPE_NCU_TARGET");
  unsetenv("KSCOPE_NCU_MANIFEST");
  for (const auto& [name, value] : saved) setenv(name.c_str(), value.c_str(), 1);
}

TEST(NcuManifest, RoundTripsRunsAndErrors) {
  TempDir dir;
  const std::string path = (dir.path / "m.json").string();
  EXPECT_FALSE(read_manifest(path));
  ChildManifest m;
  m.runs.push_back({1, 0, {{"a", false, ""}, {"b", true, "out of memory"}}});
  m.error = ManifestError{"SweepError", "boom", "n=2048", "AnnotationError"};
  write_manifest(m, path);
  const auto back = read_manifest(path);
  ASSERT_TRUE(back);
  ASSERT_EQ(back->runs.size(), 1u);
  EXPECT_EQ(back->runs[0].config, 1u);
  EXPECT_EQ(back->runs[0].regions[1].name, "b");
  EXPECT_TRUE(back->runs[0].regions[1].failed);
  EXPECT_EQ(back->runs[0].regions[1].reason, "out of memory");
  EXPECT_EQ(back->error->cause_kind, "AnnotationError");
  EXPECT_FALSE(fs::exists(path + ".tmp"));
  std::ofstream(path) << "{not json";
  EXPECT_THROW(read_manifest(path), BackendError);
}

TEST(NcuLog, SplitsLinesByPrefix) {
  const NcuLog log = parse_ncu_log(data("log_ok.log"));
  EXPECT_EQ(log.errors.size(), 0u);
  ASSERT_EQ(log.warnings.size(), 1u);
  EXPECT_EQ(log.warnings[0].rfind("Note: Running with unmodified GPU clocks", 0), 0u);
  EXPECT_EQ(log.progress.size(), 9u);
  EXPECT_EQ(diagnose_ncu_log(log, {}, "ok.log", {}).kind, LogDiagnosis::Kind::none);
}

TEST(NcuLog, PermissionErrorNamesTheFixAndTheLog) {
  const counters::AccessFacts restricted{true, false};
  const LogDiagnosis d = diagnose_ncu_log(parse_ncu_log(data("log_permission.log")), {}, "/tmp/x/ncu.log", restricted);
  EXPECT_EQ(d.kind, LogDiagnosis::Kind::permission);
  EXPECT_NE(d.message.find("ERR_NVGPUCTRPERM"), std::string::npos);
  EXPECT_NE(d.message.find("/tmp/x/ncu.log"), std::string::npos);
  EXPECT_NE(d.message.find("RmProfilingAdminOnly: 1"), std::string::npos);
  EXPECT_NE(d.message.find("NVreg_RestrictProfilingToAdminUsers=0"), std::string::npos);
}

TEST(NcuLog, UnknownMetricNoKernelsAndOtherErrors) {
  const LogDiagnosis metric =
      diagnose_ncu_log(parse_ncu_log(data("log_failed_metric.log")), {"bogus__metric.sum"}, "m.log", {});
  EXPECT_EQ(metric.kind, LogDiagnosis::Kind::unknown_metric);
  EXPECT_NE(metric.message.find("'bogus__metric.sum'"), std::string::npos);
  EXPECT_NE(metric.message.find("m.log"), std::string::npos);
  const LogDiagnosis none = diagnose_ncu_log(parse_ncu_log(data("log_no_kernels.log")), {}, "n.log", {});
  EXPECT_EQ(none.kind, LogDiagnosis::Kind::no_kernels);
  EXPECT_NE(none.message.find("n.log"), std::string::npos);
  const LogDiagnosis app = diagnose_ncu_log(parse_ncu_log(data("log_app_error.log")), {}, "a.log", {});
  EXPECT_EQ(app.kind, LogDiagnosis::Kind::errors);
  EXPECT_NE(app.message.find("The application returned an error code (3)."), std::string::npos);
}

TEST(NcuSubprocess, CapturesOutputAndExitCodes) {
  const CapturedRun run = run_captured({"/bin/sh", "-c", "echo out; echo err >&2; exit 3"});
  EXPECT_EQ(run.exit_code, 3);
  EXPECT_NE(run.output.find("out"), std::string::npos);
  EXPECT_NE(run.output.find("err"), std::string::npos);
  EXPECT_EQ(run_captured({"/bin/sh", "-c", "kill -9 $$"}).exit_code, 128 + 9);
  EXPECT_THROW(run_captured({"/nonexistent/program"}), BackendError);
}

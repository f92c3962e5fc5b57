// `kscope compare`: every exit code, the table, colours, JSON; through the command's function and,
// where the build has the kscope program (ctest's kscope_compare_program), through the program.
#include "compare_command.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "compare_fixtures.hpp"
#include "kscope/compare.hpp"
#include "test_support.hpp"
#include "core/model/caller_language.hpp"

using namespace kscope;
using namespace kscope::testing_fixtures;

namespace {

struct Outcome {
  int status;
  std::string out, err;
};

class CompareCommand : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("kscope_compare_command_" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    std::filesystem::create_directories(dir_);
    // A 20 us kernel measured twice, and a variant 10% slower; 12 runs each.
    make({"n"}, {{"spin", {1024}, "cupti__kernel_duration", "ns", around(20000, 12)}}).write_json(path("base.json"));
    make({"n"}, {{"spin", {1024}, "cupti__kernel_duration", "ns", around(20000, 12)}}).write_json(path("same.json"));
    make({"n"}, {{"spin", {1024}, "cupti__kernel_duration", "ns", around(22000, 12)}}).write_json(path("slow.json"));
    SessionInfo warm = h200();
    warm.cache_control = CacheControl::none;
    make({"n"}, {{"spin", {1024}, "cupti__kernel_duration", "ns", around(20000, 12)}}, warm)
        .write_json(path("warm.json"));
    std::ofstream(path("v2.json")) << R"({"format": "kscope-results", "version": 2, "kscope_version": "9.0"})";
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  Outcome run(std::vector<std::string> args, bool terminal = false) const {
    for (auto& a : args)
      if (a.ends_with(".json")) a = path(a);
    std::ostringstream out, err;
    const int status = compare_command(args, out, err, terminal);
    return {status, out.str(), err.str()};
  }

  std::filesystem::path dir_;
};

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

TEST_F(CompareCommand, SameKernelExitsZero) {
  const Outcome r = run({"base.json", "same.json"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_TRUE(has(r.out, "baseline:  " + path("base.json") + "  (NVIDIA H200 | backend cupti | cache_control all | "
                         "clock_control none | driver 580.65.06)\n"))
      << r.out;
  EXPECT_TRUE(has(r.out, "Annotation  n     Metric                  Unit  Baseline  Candidate  Change  "
                         "95% CI of change  p  Verdict\n"))
      << r.out;
  EXPECT_TRUE(has(r.out, "spin        1024  cupti__kernel_duration  ns    20000     20000      +0.0%   "
                         "-0.8% .. +0.7%    1  same\n"))
      << r.out;
  EXPECT_TRUE(has(r.out, "\n1 row: 1 same (threshold 2%, alpha 0.05, min-samples 5, max-rsd 10%)\n")) << r.out;
  EXPECT_FALSE(has(r.out, "\033[")) << "colours when not on a terminal";
}

TEST_F(CompareCommand, SlowerKernelExitsOneAndSaysWhy) {
  const Outcome r = run({"base.json", "slow.json"});
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_TRUE(has(r.out, "+10.0%")) << r.out;
  EXPECT_TRUE(has(r.out, "  slower\n")) << r.out;
  EXPECT_TRUE(has(r.out, "\nspin n=1024 cupti__kernel_duration: slower: median +10.0% (95% CI +")) << r.out;
  EXPECT_TRUE(has(r.out, "1 row: 1 slower (")) << r.out;
  // The other way round it is faster: nothing slower, exit 0.
  EXPECT_EQ(run({"slow.json", "base.json"}).status, 0);
  // A threshold above the change calls it the same.
  EXPECT_EQ(run({"base.json", "slow.json", "--threshold", "15"}).status, 0);
  EXPECT_EQ(run({"base.json", "slow.json", "--threshold=15"}).status, 0);
  // Declared higher-is-better, a longer duration is faster.
  EXPECT_EQ(run({"base.json", "slow.json", "--direction", "cupti__kernel_duration=higher"}).status, 0);
  // Twelve runs a side are too few for --min-samples 20: no verdict, and the gate cannot judge (3).
  const Outcome too_few = run({"base.json", "slow.json", "--min-samples", "20"});
  EXPECT_EQ(too_few.status, 3) << too_few.out;
  EXPECT_TRUE(has(too_few.out, "too_few_samples: baseline has 12 valid values, fewer than --min-samples (20)"))
      << too_few.out;
  EXPECT_TRUE(has(too_few.out, "warning: 1 row cannot be judged (verdict too_few_samples): 1 row with fewer than "
                               "--min-samples (20) runs on a side"))
      << too_few.out;
  EXPECT_TRUE(has(too_few.out, "1 row: 1 too_few_samples (")) << too_few.out;
  EXPECT_TRUE(has(run({"base.json", "slow.json", "--min-samples", "20", "--json"}).out, "\"gate\": \"cannot_judge\""));
}

TEST_F(CompareCommand, ResultsOfOneRunCannotBeJudgedAndExitThree) {
  make({"n"}, {{"spin", {1024}, "cupti__kernel_duration", "ns", {20000}}}).write_json(path("once.json"));
  make({"n"}, {{"spin", {1024}, "cupti__kernel_duration", "ns", {30000}}}).write_json(path("once_slower.json"));
  const Outcome r = run({"once.json", "once_slower.json"});
  EXPECT_EQ(r.status, 3) << r.out;
  EXPECT_TRUE(has(r.out, "too_few_samples: baseline has 1 valid value, fewer than --min-samples (5)")) << r.out;
  EXPECT_TRUE(has(r.out, "warning: 1 row cannot be judged (verdict too_few_samples): 1 row with fewer than "
                         "--min-samples (5) runs on a side (results of runs = 1 have one)"))
      << r.out;
  // Lowering --min-samples does not make one run a side judgeable: the U test cannot show a change.
  const Outcome lowered = run({"once.json", "once_slower.json", "--min-samples", "1"});
  EXPECT_EQ(lowered.status, 3) << lowered.out;
  EXPECT_TRUE(has(lowered.out, "the U test cannot reach p < --alpha (0.05)")) << lowered.out;
  // Given enough runs on both sides, the same gate exits 0 or 1.
  EXPECT_EQ(run({"base.json", "same.json"}).status, 0);
}

// A file name that starts with '-' reads as an option, as in every Unix tool; the message says how to
// name it (it said "unknown option" alone).
TEST_F(CompareCommand, ADashLedFileNameIsNamedWithTheFixAndWorksAfterDashDash) {
  std::filesystem::copy_file(path("base.json"), path("-base.json"));
  const std::string dashed = path("-base.json").substr(path("").size());
  const auto here = std::filesystem::current_path();
  std::filesystem::current_path(path(""));
  std::ostringstream out, err, out2, err2;
  const int refused = compare_command({dashed, "same.json"}, out, err, false);
  const int taken = compare_command({"--", dashed, "same.json"}, out2, err2, false);
  std::filesystem::current_path(here);
  EXPECT_EQ(refused, 64);
  EXPECT_TRUE(has(err.str(), "kscope compare: unknown option '-base.json'; to name the file '-base.json', put -- "
                             "before the file names: kscope compare [OPTIONS] -- -base.json ..."))
      << err.str();
  EXPECT_EQ(taken, 0) << err2.str();
}

// A results file from a pipe (a shell's <(cat a.json)) was refused as a FIFO: it is read once.
TEST_F(CompareCommand, AResultsFileFromAPipeIsReadOnce) {
  int ends[2];
  ASSERT_EQ(::pipe(ends), 0);
  const std::string text = [&] {
    std::ifstream in(path("base.json"));
    std::ostringstream t;
    t << in.rdbuf();
    return t.str();
  }();
  std::thread writer([&] {
    for (std::size_t done = 0; done < text.size();) {
      const ssize_t n = ::write(ends[1], text.data() + done, text.size() - done);
      if (n <= 0) break;
      done += static_cast<std::size_t>(n);
    }
    ::close(ends[1]);
  });
  std::ostringstream out, err;
  const int status = compare_command({"/dev/fd/" + std::to_string(ends[0]), path("same.json")}, out, err, false);
  writer.join();
  ::close(ends[0]);
  EXPECT_EQ(status, 0) << err.str();
}

TEST_F(CompareCommand, InputsThatCannotBeComparedExitTwo) {
  struct Case {
    std::vector<std::string> args;
    std::string message;
  };
  const Case cases[] = {
      {{"base.json", "warm.json"},
       "kscope compare: compare() refuses to compare results taken with different cache_control ('all' vs 'none'): "
       "their numbers measure different things. Measure both with the same cache_control\n"},
      {{"base.json", "missing.json"},
       "kscope compare: cannot read '" + path("missing.json") +
           "': no such file; give a file written by Results::write_json (C++) or ProfileResults.save (Python)\n"},
      // Issue 25: a directory was an uncaught C++ stream error (std::__ios_failure, exit 134).
      {{"base.json", path("")},
       "kscope compare: cannot read '" + path("") +
           "': it is a directory; give a file written by Results::write_json (C++) or ProfileResults.save (Python)\n"},
      {{"v2.json", "base.json"}, "kscope compare: '" + path("v2.json") +
                                     "' is in kscope results format version 2 (written by kscope 9.0); this kscope "
                                     "(" KSCOPE_VERSION ") reads version 1: update kscope to load it\n"},
      {{"base.json", "slow.json", "--direction", "cupti__kernel_durration=lower"},
       "kscope compare: --direction names metric 'cupti__kernel_durration', which neither result holds; closest "
       "metrics: 'cupti__kernel_duration'\n"},
  };
  for (const Case& k : cases) {
    const Outcome r = run(k.args);
    EXPECT_EQ(r.status, 2) << k.message;
    EXPECT_EQ(r.err, k.message);
    EXPECT_EQ(r.out, "");
  }
}

TEST_F(CompareCommand, BadUsageExitsSixtyFour) {
  struct Case {
    std::vector<std::string> args;
    std::string message;
  };
  const Case cases[] = {
      {{}, "BASELINE.json is required"},
      {{"base.json"}, "CANDIDATE.json is required"},
      {{"base.json", "slow.json", "extra.json"}, "unexpected argument '" + path("extra.json") + "'"},
      {{"base.json", "slow.json", "--treshold", "5"}, "unknown option '--treshold'"},
      {{"base.json", "slow.json", "--threshold"}, "--threshold: 1 required PCT missing"},
      {{"base.json", "slow.json", "--threshold", "5%"}, "--threshold takes a number, not '5%'"},
      {{"base.json", "slow.json", "--threshold", "150"},
       "--threshold must be a percentage from 0 up to (not including) 100, got 150 (the default is 2)"},
      {{"base.json", "slow.json", "--alpha", "0"},
       "--alpha must lie strictly between 0 and 1, got 0 (the default is 0.05)"},
      {{"base.json", "slow.json", "--min-samples", "2.5"}, "--min-samples takes a whole number, not '2.5'"},
      {{"base.json", "slow.json", "--max-rsd", "-1"},
       "--max-rsd must be a positive percentage, got -1 (the default is 10; infinity turns the check off)"},
      {{"base.json", "slow.json", "--direction", "t=sideways"},
       "--direction takes METRIC=lower, METRIC=higher or METRIC=undefined, not 't=sideways'"},
      {{"base.json", "slow.json", "--json=maybe"}, "Could not convert: --json = maybe"},
  };
  for (const Case& k : cases) {
    const Outcome r = run(k.args);
    EXPECT_EQ(r.status, 64) << k.message;
    EXPECT_EQ(r.err.substr(0, r.err.find('\n')), "kscope compare: " + k.message);
    EXPECT_TRUE(has(r.err, "usage: kscope compare BASELINE.json CANDIDATE.json")) << r.err;
    EXPECT_EQ(r.out, "");
  }
  EXPECT_EQ(detail::caller(), detail::Caller::cpp);  // the command's naming ends with it
}

TEST_F(CompareCommand, HelpExitsZero) {
  const Outcome r = run({"--help"});
  EXPECT_EQ(r.status, 0);
  EXPECT_TRUE(has(r.out, "Exit status:\n  0   no row is slower, and every row measured on both sides could be "
                         "judged\n  1   at least one row is slower\n"))
      << r.out;
  EXPECT_TRUE(has(r.out, "  3   cannot judge: no row is slower, but a side of some row has fewer than --min-samples "
                         "valid\n      runs, or too few for the U test (too_few_samples; results of runs=1 have one)\n"))
      << r.out;
}

TEST_F(CompareCommand, VerdictsAreColouredOnATerminalUnlessNoColor) {
  unsetenv("NO_COLOR");
  EXPECT_TRUE(has(run({"base.json", "slow.json"}, true).out, "\033[31mslower\033[0m\n"));
  EXPECT_FALSE(has(run({"base.json", "same.json"}, true).out, "\033["));  // same is not coloured
  setenv("NO_COLOR", "1", 1);
  EXPECT_FALSE(has(run({"base.json", "slow.json"}, true).out, "\033["));
  setenv("NO_COLOR", "", 1);  // set but empty: colours stay on
  EXPECT_TRUE(has(run({"base.json", "slow.json"}, true).out, "\033[31mslower\033[0m\n"));
  unsetenv("NO_COLOR");
}

TEST_F(CompareCommand, JsonOutputHoldsTheRowsAndWarnings) {
  const Outcome r = run({"base.json", "slow.json", "--json", "--alpha", "0.01"});
  EXPECT_EQ(r.status, 1);
  const auto doc = nlohmann::json::parse(r.out);
  EXPECT_EQ(doc["baseline"], path("base.json"));
  EXPECT_EQ(doc["options"]["alpha"], 0.01);
  EXPECT_TRUE(doc["warnings"].empty());
  ASSERT_EQ(doc["rows"].size(), 1u);
  EXPECT_EQ(doc["rows"][0]["Verdict"], "slower");
  EXPECT_EQ(doc["rows"][0]["n"], 1024);
  EXPECT_DOUBLE_EQ(doc["rows"][0]["Ratio"].get<double>(), 1.1);
}

TEST_F(CompareCommand, OutputPrefixWritesTheComparisonsFormats) {
  // The files are the rows of the comparison's format table: its table as CSV, and the JSON that
  // --json prints (without the files' names).
  const Outcome r = run({"base.json", "slow.json", "--output-prefix", path("cmp_")});
  EXPECT_EQ(r.status, 1) << r.err;
  const std::string csv = kscope_test::text_of(path("cmp_comparison.csv"));
  std::string header = "Annotation,n";  // the axes after Annotation, then the other columns
  for (const kscope::ColumnSpec& c : kscope::comparison_columns())
    if (c.name != "Annotation") header += "," + c.name;
  EXPECT_EQ(csv.substr(0, csv.find('\n')), header);
  const auto saved = nlohmann::json::parse(kscope_test::text_of(path("cmp_comparison.json")));
  auto printed = nlohmann::json::parse(run({"base.json", "slow.json", "--json"}).out);
  printed.erase("baseline");
  printed.erase("candidate");
  EXPECT_EQ(saved, printed);
  EXPECT_EQ(saved["gate"], "slower");
  // A prefix whose files cannot be written: the output's exit status, the reason on stderr.
  const Outcome blocked = run({"base.json", "slow.json", "--output-prefix", path("missing_dir/x_")});
  EXPECT_EQ(blocked.status, 74);
  EXPECT_TRUE(has(blocked.err, "comparison.csv")) << blocked.err;
}

// The kscope program itself, when ctest gives its path (kscope_compare_program).
TEST_F(CompareCommand, ProgramExitCodes) {
  const char* program = std::getenv("KSCOPE_CLI");
  if (program == nullptr) GTEST_SKIP() << "KSCOPE_CLI is not set: ctest's kscope_compare_program runs this test";
  const auto status = [&](const std::string& args) {
    const int raw = std::system((std::string(program) + " compare " + args + " >/dev/null 2>&1").c_str());
    return WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  };
  EXPECT_EQ(status(path("base.json") + " " + path("same.json")), 0);
  EXPECT_EQ(status(path("base.json") + " " + path("slow.json")), 1);
  EXPECT_EQ(status(path("base.json") + " " + path("warm.json")), 2);
  EXPECT_EQ(status(path("base.json")), 64);
}

namespace {

// The kscope program run with `args`, its stdout on `out_fd` (a pipe, /dev/full...) and its stderr
// in a file; SIGPIPE ignored first when `ignore_sigpipe` (as a Python parent leaves it). Returns
// the raw wait status and the stderr text.
std::pair<int, std::string> run_program(const std::vector<std::string>& args, int out_fd, bool ignore_sigpipe,
                                        const std::string& err_path) {
  const pid_t child = fork();
  if (child == 0) {
    dup2(out_fd, STDOUT_FILENO);
    const int err = open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(err, STDERR_FILENO);
    signal(SIGPIPE, ignore_sigpipe ? SIG_IGN : SIG_DFL);
    std::vector<char*> argv{const_cast<char*>(std::getenv("KSCOPE_CLI"))};
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(argv[0], argv.data());
    _exit(127);
  }
  int status = 0;
  waitpid(child, &status, 0);
  std::ifstream in(err_path);
  return {status, std::string(std::istreambuf_iterator<char>(in), {})};
}

}  // namespace

// Issue 25: the kscope program behaves as Unix tools do: --version, `--` ending the options, a
// non-zero exit when its output cannot be written, and SIGPIPE on a closed pipe.
TEST_F(CompareCommand, ProgramIsAWellBehavedUnixTool) {
  if (std::getenv("KSCOPE_CLI") == nullptr)
    GTEST_SKIP() << "KSCOPE_CLI is not set: ctest's kscope_compare_program runs this test";
  const std::string out_path = path("out.txt"), err_path = path("err.txt");
  const auto to_file = [&](const std::vector<std::string>& args) {
    const int fd = open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    auto [status, err] = run_program(args, fd, false, err_path);
    close(fd);
    std::ifstream in(out_path);
    return std::tuple{status, std::string(std::istreambuf_iterator<char>(in), {}), err};
  };
  const auto exit_code = [](int status) { return WIFEXITED(status) ? WEXITSTATUS(status) : -1; };

  auto [version_status, version, version_err] = to_file({"--version"});
  EXPECT_EQ(exit_code(version_status), 0);
  EXPECT_EQ(version, "kscope " KSCOPE_VERSION "\n");

  std::filesystem::copy_file(path("base.json"), path("-base.json"));
  auto [dashed_status, dashed, dashed_err] = to_file({"compare", "--json", "--", path("-base.json"), path("same.json")});
  EXPECT_EQ(exit_code(dashed_status), 0) << dashed_err;
  EXPECT_EQ(nlohmann::json::parse(dashed)["baseline"], path("-base.json"));

  auto [help_status, help, help_err] = to_file({"--help"});
  EXPECT_EQ(exit_code(help_status), 0);
  for (const char* command : {"compare", "doctor", "merge", "metrics", "--version"})
    EXPECT_TRUE(has(help, command)) << help;
  EXPECT_FALSE(has(help, "Backend::") || has(help, "Settings::")) << help;  // it said Backend::counters

  auto [unknown_status, unknown, unknown_err] = to_file({"comapre"});
  EXPECT_EQ(exit_code(unknown_status), 64);
  EXPECT_TRUE(has(unknown_err, "kscope: unknown command 'comapre'")) << unknown_err;

  // A full disk: the output is lost, so the exit status says so (it was 0).
  const int full = open("/dev/full", O_WRONLY);
  ASSERT_GE(full, 0);
  for (const std::vector<std::string>& args : {std::vector<std::string>{"compare", path("base.json"), path("same.json")},
                                               std::vector<std::string>{"--help"}}) {
    const auto [status, err] = run_program(args, full, false, err_path);
    EXPECT_EQ(exit_code(status), 74) << args[0];
    EXPECT_EQ(err, "kscope: cannot write the output: No space left on device\n");
  }
  close(full);

  // A reader that is gone: SIGPIPE ends the program (141 in a shell), as it ends cat or grep; where
  // the parent ignores SIGPIPE, the write error is the exit status.
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  close(fds[0]);
  const auto [killed, killed_err] = run_program({"compare", "--help"}, fds[1], false, err_path);
  EXPECT_TRUE(WIFSIGNALED(killed) && WTERMSIG(killed) == SIGPIPE) << killed << killed_err;
  const auto [ignored, ignored_err] = run_program({"compare", "--help"}, fds[1], true, err_path);
  EXPECT_EQ(exit_code(ignored), 74);
  EXPECT_EQ(ignored_err, "kscope: cannot write the output: Broken pipe\n");
  close(fds[1]);
}

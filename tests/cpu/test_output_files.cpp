// Issue 25, never clobber, never lose: the files kscope writes go through symbolic links and never
// replace a device, a FIFO or a directory; an output prefix is one process's at a time (a killed
// holder's lock taken over); an earlier sweep's files are replaced only when asked; an output
// prefix that names a directory is that directory.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "base/file_access.hpp"
#include "core/files/output_formats.hpp"
#include "kscope/annotation.hpp"
#include "kscope/errors.hpp"
#include "kscope/profile.hpp"
#include "kscope/testing.hpp"
#include "test_support.hpp"

using namespace kscope;
using kscope::testing::SimulatedBackend;
using kscope_test::error_of;
using kscope_test::in_child;
using kscope_test::streamed;
using kscope_test::TempDir;
namespace fs = std::filesystem;

namespace {

const Sweep kSweep = Sweep().axis("n", {1, 2, 3});

// A sweep on the simulated backend; `before_run` is called before each body call.
Results sweep(const Settings& settings, const std::function<void()>& before_run = {}) {
  SimulatedBackend backend;
  return profile_with_backend(kSweep, settings, [&](const Config& c) {
    if (before_run) before_run();
    Annotation a("k");
    backend.launch("kern", 10.0 * static_cast<double>(c.get<std::int64_t>("n")));
  }, backend);
}

std::string read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// A child process that runs a sweep under `prefix` and stays in its first run until killed; returns
// once the sweep holds the prefix (its manifest is written).
pid_t sweep_in_child(const std::string& prefix) {
  const pid_t child = fork();
  if (child == 0) {
    try {
      sweep(streamed(prefix), [] { pause(); });
    } catch (...) {
    }
    _exit(0);
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (!fs::exists(prefix + "manifest.json") && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  return child;
}

}  // namespace

TEST(OutputPrefix, ASecondProcessIsRefusedNamingTheHolderAndAKilledOnesLockIsTakenOver) {
  TempDir dir;
  const std::string prefix = dir.prefix();
  const pid_t holder = sweep_in_child(prefix);
  ASSERT_TRUE(fs::exists(prefix + "lock"));
  Settings resume = streamed(prefix);
  resume.resume = true;
  const std::string refused = error_of([&] { sweep(resume); });
  EXPECT_TRUE(has(refused, "Settings::output_prefix '" + prefix + "' is in use: process " + std::to_string(holder) +
                               " on host "))
      << refused;
  EXPECT_TRUE(has(refused, ") is writing a sweep there (it holds '" + prefix + "lock'), and two processes writing "
                           "under one prefix would mix their files. Wait for it to finish, or give this sweep another "
                           "Settings::output_prefix"))
      << refused;

  kill(holder, SIGKILL);
  waitpid(holder, nullptr, 0);
  ASSERT_TRUE(fs::exists(prefix + "lock"));  // left behind by the killed process, its lock gone with it
  const Results resumed = sweep(resume);
  EXPECT_EQ(resumed.rows().size(), 3u);
  EXPECT_FALSE(fs::exists(prefix + "lock"));  // removed when the sweep that took it over ended
}

TEST(OutputPrefix, AnUnfinishedSweepIsRefusedAFinishedOneMovedAsideUnlessResumedOrOverwritten) {
  TempDir dir;
  const std::string prefix = dir.prefix();
  int calls = 0;
  EXPECT_THROW(sweep(streamed(prefix), [&] {
    if (++calls == 5) throw std::runtime_error("out of memory");  // in config 2
  }), SweepError);
  const std::string unfinished = error_of([&] { sweep(streamed(prefix)); });
  EXPECT_EQ(unfinished, "Settings::output_prefix '" + prefix + "' holds an unfinished sweep (1 of 3 configs "
                        "measured: killed, interrupted or failed) (" + prefix + "manifest.json, " + prefix +
                        "progress.jsonl, " + prefix + "samples.csv, " + prefix + "summary.csv, " + prefix +
                        "results.json), which kscope does not replace unasked. Set Settings::resume = true to "
                        "continue it, Settings::overwrite = true to replace it, or give another "
                        "Settings::output_prefix");
  sweep([&] {
    Settings s = streamed(prefix);
    s.resume = true;
    return s;
  }());
  const std::string finished = read(prefix + "results.json");
  Settings again = streamed(prefix);
  again.verbosity = Verbosity::info;
  ::testing::internal::CaptureStderr();
  sweep(again);
  std::string log = ::testing::internal::GetCapturedStderr();
  EXPECT_TRUE(has(log, "[kscope] moved a finished sweep under '" + prefix + "' aside: its 5 files end in '.~1~' now "
                       "(Settings::overwrite = true replaces it instead, Settings::resume = true returns its results "
                       "without measuring)\n"))
      << log;
  EXPECT_EQ(read(prefix + "results.json.~1~"), finished);
  for (const char* file : {"manifest.json", "progress.jsonl", "samples.csv", "summary.csv"})
    EXPECT_TRUE(fs::exists(prefix + file + ".~1~")) << file;

  Settings overwrite = streamed(prefix);
  overwrite.overwrite = true;
  overwrite.verbosity = Verbosity::info;
  bool earlier_results_gone = false;
  ::testing::internal::CaptureStderr();
  sweep(overwrite, [&] { earlier_results_gone = !fs::exists(prefix + "results.json"); });
  log = ::testing::internal::GetCapturedStderr();
  EXPECT_TRUE(has(log, "replacing a finished sweep under '" + prefix + "' (Settings::overwrite)")) << log;
  EXPECT_TRUE(earlier_results_gone);  // they would pass for this sweep's until it writes its own
  EXPECT_FALSE(fs::exists(prefix + "results.json.~2~"));

  overwrite.resume = true;
  EXPECT_EQ(error_of([&] { sweep(overwrite); }),
            "Settings::resume continues the sweep under Settings::output_prefix and Settings::overwrite replaces it: "
            "set one of them");
}

TEST(OutputPrefix, FilesWithoutAManifestAreNotResumedOver) {
  TempDir dir;
  const std::string prefix = dir.prefix();
  std::ofstream(prefix + "summary.csv") << "Annotation\nk\n";
  Settings resume = streamed(prefix);
  resume.resume = true;
  EXPECT_EQ(error_of([&] { sweep(resume); }),
            "cannot resume under Settings::output_prefix '" + prefix + "': it holds files no kscope result is known "
            "by (no manifest.json, results.json or race.csv says what wrote them) (" + prefix + "summary.csv), so "
            "nothing there can be continued. Set Settings::overwrite = true (instead of Settings::resume) to replace "
            "those files, or give another Settings::output_prefix");
  EXPECT_EQ(read(prefix + "summary.csv"), "Annotation\nk\n");
}

TEST(OutputPrefix, ADirectorysNameStandsForTheDirectory) {
  TempDir dir;
  const std::string out = dir.prefix("out");
  fs::create_directory(out);
  sweep(streamed(out));  // was written beside it as outsummary.csv, ...
  EXPECT_TRUE(fs::exists(out + "/summary.csv"));
  EXPECT_TRUE(fs::exists(out + "/results.json"));
  EXPECT_FALSE(fs::exists(out + "summary.csv"));
}

TEST(OutputFiles, WriteAllWritesTheFormatsWithAPrefixFileAndEachFormatWritesItsFile) {
  TempDir dir;
  const Results r = sweep(streamed(""));
  r.write_all(dir.prefix("all_"));
  std::size_t prefix_files = 0;
  const auto formats = detail::output_formats();
  for (const detail::OutputFormat& format : formats) {
    const std::string alone = dir.prefix(std::string("alone_") + (format.prefix_file ? format.prefix_file : "other"));
    format.write(r, alone);
    EXPECT_FALSE(read(alone).empty()) << format.format;
    if (!format.prefix_file) continue;
    ++prefix_files;
    EXPECT_EQ(read(dir.prefix("all_") + format.prefix_file), read(alone)) << format.format;
  }
  EXPECT_EQ(detail::result_files().size(), prefix_files);
  EXPECT_EQ(std::distance(fs::directory_iterator(dir.prefix("")), fs::directory_iterator()),
            static_cast<std::ptrdiff_t>(formats.size() + prefix_files));
}


// A format is one row of the table: a streamed sweep writes its prefix file with the others, the
// refusal of an earlier sweep names it, a sweep that replaces an earlier one removes it first (a
// stale file never passes for the new sweep's), and a failed sweep's kept results include it.
TEST(OutputFiles, AFormatAddedToTheTableIsWrittenByAStreamedSweepAndReplacedOnOverwrite) {
  TempDir dir;
  const std::string prefix = dir.prefix();
  const std::string problems = in_child([&] {
    std::string found;
    const auto expect = [&](bool holds, const std::string& what) {
      if (!holds) found += what + "\n";
    };
    detail::register_output_format({"row count", "rows.txt", [](const Results& r, const std::string& path) {
                                      detail::write_whole(path, std::to_string(r.rows().size()) + " rows\n");
                                    }});
    sweep(streamed(prefix));
    expect(read(prefix + "rows.txt") == "3 rows\n", "a streamed sweep wrote rows.txt: " + read(prefix + "rows.txt"));

    for (const char* file : {"manifest.json", "progress.jsonl", "samples.csv", "summary.csv", "results.json"})
      fs::remove(prefix + file);
    const std::string refused = error_of([&] { sweep(streamed(prefix)); });
    expect(has(refused, "holds files no kscope result is known by (no manifest.json, results.json or race.csv says "
                        "what wrote them) (" + prefix + "rows.txt)"),
           "refused for rows.txt: " + refused);

    std::ofstream(prefix + "rows.txt") << "stale";
    Settings replace = streamed(prefix);
    replace.overwrite = true;
    bool stale_seen = false;
    sweep(replace, [&] { stale_seen = stale_seen || fs::exists(prefix + "rows.txt"); });
    expect(!stale_seen, "the stale rows.txt was removed before the first run");
    expect(read(prefix + "rows.txt") == "3 rows\n", "the replacing sweep wrote rows.txt: " + read(prefix + "rows.txt"));

    int calls = 0;
    const std::string failed = error_of<SweepError>([&] {
      sweep(replace, [&] {
        if (++calls == 5) throw std::runtime_error("out of memory");  // in config 2
      });
    });
    expect(has(failed, "written to " + prefix + "{summary.csv,samples.csv,results.json,rows.txt}"),
           "a failed sweep's message names rows.txt: " + failed);
    expect(read(prefix + "rows.txt") == "1 rows\n", "a failed sweep kept its rows in rows.txt");
    return found;
  });
  EXPECT_EQ(problems, "");
}

TEST(OutputFiles, WritesGoThroughSymbolicLinksToTheirTargetExceptAPrefixsFiles) {
  TempDir dir;
  const Results r = sweep(streamed(""));
  fs::create_directory(dir.prefix("data"));
  std::ofstream(dir.prefix("data/base.json")) << "old";
  fs::create_symlink("data/base.json", dir.prefix("base.json"));    // relative to the link's directory
  fs::create_symlink(dir.prefix("data/new.csv"), dir.prefix("new.csv"));  // dangling: the target is made
  r.write_json(dir.prefix("base.json"));
  r.write_csv(dir.prefix("new.csv"));
  EXPECT_TRUE(fs::is_symlink(dir.prefix("base.json")));  // was replaced by a regular file
  EXPECT_TRUE(fs::is_symlink(dir.prefix("new.csv")));
  EXPECT_EQ(load_results(dir.prefix("data/base.json")).rows().size(), 3u);
  EXPECT_TRUE(has(read(dir.prefix("data/new.csv")), "Annotation"));

  // Never the files of an output prefix, even when the caller lets the sweep replace what is there.
  std::ofstream(dir.prefix("data/samples.csv")) << "precious\n";
  fs::create_symlink(dir.prefix("data/samples.csv"), dir.prefix("sweep_samples.csv"));
  Settings s = streamed(dir.prefix("sweep_"));
  s.overwrite = true;
  EXPECT_EQ(error_of<FileError>([&] { sweep(s); }),
            "cannot write '" + dir.prefix("sweep_samples.csv") + "' under Settings::output_prefix: it is a symbolic "
            "link (to '" + dir.prefix("data/samples.csv") + "'), not a file kscope wrote there. kscope never writes, "
            "replaces or moves the files of an output prefix through such a path (it would write into what it "
            "names): remove it, or give another Settings::output_prefix");
  EXPECT_EQ(read(dir.prefix("data/samples.csv")), "precious\n");
}

TEST(OutputFiles, WhatIsNoRegularFileIsNeverReplaced) {
  TempDir dir;
  const Results r = sweep(streamed(""));
  ASSERT_EQ(mkfifo(dir.prefix("pipe").c_str(), 0644), 0);
  fs::create_symlink(dir.prefix("pipe"), dir.prefix("link"));
  fs::create_directory(dir.prefix("folder"));
  const struct {
    std::string path;
    std::string message;
    std::error_code code;
  } cases[] = {
      {"/dev/null",
       "cannot write '/dev/null': it is a character device, not a regular file, and kscope writes a file whole "
       "(beside it, then renamed over it), which would replace it; give the path of a regular file",
       {}},
      {dir.prefix("pipe"), "cannot write '" + dir.prefix("pipe") + "': it is a FIFO (named pipe), not a regular file", {}},
      {dir.prefix("link"),
       "cannot write '" + dir.prefix("link") + "' (a link to '" + dir.prefix("pipe") + "'): it is a FIFO (named pipe)",
       {}},
      {dir.prefix("folder"), "cannot write '" + dir.prefix("folder") + "': it is a directory; give the path of a file",
       std::make_error_code(std::errc::is_a_directory)},
      {dir.prefix("missing/x.json"),
       "cannot write '" + dir.prefix("missing/x.json") + "': its directory '" + dir.prefix("missing") +
           "' does not exist; create it, or give a path in an existing directory",
       std::make_error_code(std::errc::no_such_file_or_directory)},
  };
  for (const auto& k : cases) {
    try {
      r.write_json(k.path);
      ADD_FAILURE() << "wrote " << k.path;
    } catch (const FileError& e) {
      EXPECT_EQ(std::string(e.what()).substr(0, k.message.size()), k.message);
      EXPECT_EQ(e.code(), k.code) << k.path;
    }
  }
  struct stat status {};
  ASSERT_EQ(stat("/dev/null", &status), 0);
  EXPECT_TRUE(S_ISCHR(status.st_mode));
  EXPECT_EQ(fs::status(dir.prefix("pipe")).type(), fs::file_type::fifo);
  EXPECT_EQ(fs::directory_iterator(dir.prefix("folder")), fs::directory_iterator());

  // A sweep whose prefix holds a device where a file goes fails before it runs, keeping the device.
  fs::remove(dir.prefix("link"));
  fs::create_symlink("/dev/null", dir.prefix("sweep_manifest.json"));
  Settings s = streamed(dir.prefix("sweep_"));
  s.overwrite = true;
  EXPECT_THROW(sweep(s), FileError);
  EXPECT_TRUE(fs::is_symlink(dir.prefix("sweep_manifest.json")));
}

TEST(OutputFiles, AWriteThatFailsLeavesTheFileAsItWasAndKeepsItsPermissions) {
  TempDir dir;
  const std::string path = dir.prefix("results.csv");
  std::ofstream(path) << "earlier";
  fs::permissions(path, fs::perms::owner_read | fs::perms::owner_write);
  EXPECT_THROW(detail::write_whole(path, [](std::ostream& out) {
    out << "half";
    throw std::runtime_error("the writer failed");
  }), std::runtime_error);
  EXPECT_EQ(read(path), "earlier");
  std::size_t files = 0;
  for (const auto& entry : fs::directory_iterator(dir.prefix(""))) files += entry.is_regular_file();
  EXPECT_EQ(files, 1u);  // no temporary file left beside it
  detail::write_whole(path, std::string("later"));
  EXPECT_EQ(read(path), "later");
  EXPECT_EQ(fs::status(path).permissions() & fs::perms::all, fs::perms::owner_read | fs::perms::owner_write);
}

// Issue 39, hostile files and shared directories: whatever a file holds or a path points to, kscope
// neither crashes, aborts nor hangs, and writes nothing outside the files it names. Readers refuse
// what is no regular file without waiting on it; JSON too deep, numbers beyond a double and
// repeated rows are errors naming the file; the lock and the temporaries never write through, nor
// remove, a link someone else put there; merged results obey a sweep's no-clobber rules.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <future>
#include <sstream>
#include <thread>

#include "base/csv.hpp"
#include "base/file_access.hpp"
#include "compare_command.hpp"
#include "compare_fixtures.hpp"
#include "kscope/annotation.hpp"
#include "kscope/errors.hpp"
#include "kscope/merge.hpp"
#include "kscope/profile.hpp"
#include "kscope/testing.hpp"
#include "merge_command.hpp"
#include "test_support.hpp"

using namespace kscope;
using kscope::testing::SimulatedBackend;
using kscope_test::error_of;
using kscope_test::streamed;
using kscope_test::TempDir;
namespace fs = std::filesystem;

namespace {

Results sweep(const Settings& settings, std::size_t configs = 3) {
  SimulatedBackend backend;
  std::vector<Value> n;
  for (std::size_t i = 1; i <= configs; ++i) n.push_back(static_cast<std::int64_t>(i));
  return profile_with_backend(Sweep().axis("n", n), settings, [&](const Config& c) {
    Annotation a("k");
    backend.launch("kern", 10.0 * static_cast<double>(c.get<std::int64_t>("n")));
  }, backend);
}

// The shards of a sweep split in two, measured under `prefix`; their settings (those of the last).
Settings two_shards(const std::string& prefix) {
  Settings s = streamed(prefix);
  for (std::size_t i = 0; i < 2; ++i) {
    s.shard = Shard{i, 2};
    sweep(s);
  }
  return s;
}

std::string read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

void write(const std::string& path, const std::string& text) { std::ofstream(path, std::ios::binary) << text; }

// `f`'s outcome within 10 s. A read that blocks on `fifo` is freed by opening it for writing (and the
// test fails), so that a hang fails the test instead of stopping the suite.
template <typename F>
void within_seconds(F f, const std::string& fifo) {
  auto done = std::async(std::launch::async, f);
  if (done.wait_for(std::chrono::seconds(10)) == std::future_status::ready) return done.get();
  ADD_FAILURE() << "blocked on the FIFO " << fifo;
  ::close(::open(fifo.c_str(), O_WRONLY | O_NONBLOCK));
  done.wait();
}

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// What `f` returns, run by an unprivileged user: in a child process as the user nobody where the
// tests run as root (who may write anywhere).
std::string as_unprivileged(const std::function<std::string()>& f) {
  if (::geteuid() != 0) return f();
  int pipe_ends[2];
  if (::pipe(pipe_ends) != 0) return "(no pipe)";
  const pid_t child = ::fork();
  if (child == 0) {
    ::close(pipe_ends[0]);
    if (::setgid(65534) != 0 || ::setuid(65534) != 0) ::_exit(2);
    const std::string text = f();
    const bool written = ::write(pipe_ends[1], text.data(), text.size()) == static_cast<ssize_t>(text.size());
    ::_exit(written ? 0 : 1);
  }
  ::close(pipe_ends[1]);
  std::string text;
  char buffer[4096];
  for (ssize_t n; (n = ::read(pipe_ends[0], buffer, sizeof buffer)) > 0;) text.append(buffer, static_cast<std::size_t>(n));
  ::close(pipe_ends[0]);
  int status = 0;
  ::waitpid(child, &status, 0);
  return text;
}

// Whether every byte sequence of `text` is UTF-8 (what Python must decode).
bool utf8(const std::string& text) {
  std::size_t i = 0;
  while (i < text.size()) {
    const auto c = static_cast<unsigned char>(text[i]);
    const std::size_t n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
    if (n == 0 || i + n > text.size()) return false;
    for (std::size_t k = 1; k < n; ++k)
      if ((static_cast<unsigned char>(text[i + k]) & 0xC0) != 0x80) return false;
    i += n;
  }
  return true;
}

}  // namespace

// Bad case 1: 100,000 nested '[' crashed every reader of a results file (segmentation fault).
TEST(HostileResultsFile, DeepNestingIsRefusedNamingTheFile) {
  TempDir dir;
  const std::string path = dir.prefix("deep.json");
  write(path, std::string(100000, '[') + std::string(100000, ']'));
  EXPECT_EQ(error_of([&] { load_results(path); }),
            "'" + path + "' is not JSON that kscope reads (it nests deeper than 64 levels, at line 1, column 65); "
            "give a file written by Results::write_json");
  std::ostringstream out, err;
  EXPECT_EQ(merge_command({dir.prefix("merged_"), path}, out, err), 2);
  EXPECT_TRUE(has(err.str(), "nests deeper than 64 levels")) << err.str();
}

// Bad case 2: a number beyond a double aborted kscope compare and merge (exit 134, nlohmann's
// out_of_range uncaught) and reached Python without the file's name.
TEST(HostileResultsFile, ANumberBeyondADoubleIsRefusedNamingTheFile) {
  TempDir dir;
  const std::string good = dir.prefix("good.json"), huge = dir.prefix("huge.json");
  sweep(kscope_test::quiet()).write_json(good);
  std::string text = read(good);
  text.replace(text.find("\"AvgValue\": ") + 12, 1, "1e999,\"was\": 1");
  write(huge, text);
  const std::string error = error_of([&] { load_results(huge); });
  EXPECT_TRUE(has(error, "'" + huge + "' is not JSON that kscope reads (number overflow parsing '1e999': beyond "
                         "the range of a double (kscope writes infinities as \"Infinity\"))"))
      << error;
  std::ostringstream out, err;
  EXPECT_EQ(compare_command({good, huge}, out, err, false), 2);
  EXPECT_TRUE(has(err.str(), huge)) << err.str();
}

// A duplicated summary row loaded silently, then showed up in compare as a phantom row.
TEST(HostileResultsFile, ARepeatedSummaryRowIsRefused) {
  TempDir dir;
  const std::string path = dir.prefix("twice.json");
  sweep(kscope_test::quiet(), 1).write_json(path);
  std::string text = read(path);
  const auto start = text.find("\n \"summary\": [") + 14, end = text.find("\n  }", start) + 4;
  text.insert(end, "," + text.substr(start, end - start));
  write(path, text);
  EXPECT_EQ(error_of([&] { load_results(path); }),
            "'" + path + "': summary row 1 repeats row 0 (annotation 'k', config 0, metric 'test__kernel_duration'): a "
            "results file has one row per annotation, config and metric, so this one was edited or joined from two; "
            "give a file written by Results::write_json");
}

// A binary or UTF-16 file: Python failed to decode the message (UnicodeDecodeError, no file name).
TEST(HostileResultsFile, BinaryAndUtf16TextAreRefusedInPrintableMessages) {
  TempDir dir;
  for (const std::string& text : {std::string("\xFF\xFE{\0\"\0", 6), std::string("{\"format\": \"\xC3\x28\"}"),
                                  std::string("\xEF\xBB\xBF[\x80\x81]")}) {
    const std::string path = dir.prefix("odd.json");
    write(path, text);
    const std::string error = error_of([&] { load_results(path); });
    EXPECT_TRUE(has(error, "'" + path + "' is not JSON that kscope reads (")) << error;
    EXPECT_TRUE(utf8(error)) << error;
  }
}

// Reading never waits on a FIFO: load blocked forever; so did a resume whose samples.csv was one. A
// pipe is read once (a shell's process substitution, <(cat a.json)): one that nothing writes to is
// empty at once; a resume never reads a FIFO among a prefix's files.
TEST(HostileFiles, ReadersReadAPipeOnceAndNeverWaitForAWriter) {
  TempDir dir;
  const std::string fifo = dir.prefix("results.json");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  within_seconds([&] {
    EXPECT_EQ(error_of([&] { load_results(fifo); }),
              "'" + fifo + "' is not JSON that kscope reads (parse error at line 1, column 1: syntax error while "
              "parsing value - unexpected end of input; expected '[', '{', or a literal); give a file written by "
              "Results::write_json");
  }, fifo);

  Settings s = streamed(dir.prefix("sweep_"));
  const Results measured = sweep(s);
  int ends[2];
  ASSERT_EQ(::pipe(ends), 0);
  std::thread writer([&] {
    const std::string text = read(s.output_prefix + "results.json");
    for (std::size_t done = 0; done < text.size();) {
      const ssize_t n = ::write(ends[1], text.data() + done, text.size() - done);
      if (n <= 0) break;
      done += static_cast<std::size_t>(n);
    }
    ::close(ends[1]);
  });
  const Results piped = load_results("/dev/fd/" + std::to_string(ends[0]));
  writer.join();
  ::close(ends[0]);
  EXPECT_EQ(piped.rows().size(), measured.rows().size());

  fs::remove(s.output_prefix + "samples.csv");
  ASSERT_EQ(::mkfifo((s.output_prefix + "samples.csv").c_str(), 0600), 0);
  s.resume = true;
  within_seconds([&] {
    EXPECT_TRUE(has(error_of<FileError>([&] { sweep(s); }), "it is a FIFO (named pipe), not a file kscope wrote there"));
  }, s.output_prefix + "samples.csv");
}

// A file larger than kscope reads whole is refused before it is read (a sparse file takes no disk).
TEST(HostileFiles, AResultsFileLargerThanKscopeReadsWholeIsRefusedUnread) {
  TempDir dir;
  const std::string path = dir.prefix("huge.json");
  write(path, "");
  ASSERT_EQ(::truncate(path.c_str(), static_cast<off_t>(detail::json_document_limit() + 1)), 0);
  EXPECT_TRUE(has(error_of<FileError>([&] { load_results(path); }), "more than kscope reads whole"));
}

// The samples reader holds one record's fields whatever a line holds: a line of commas kept a
// string per comma (32 bytes for each byte of the file).
TEST(HostileFiles, ACsvRecordKeepsAtMostItsExpectedFields) {
  std::istringstream in(std::string(1 << 20, ',') + "\n");
  detail::CsvRecordReader reader(in, 3);
  detail::CsvRecord record;
  ASSERT_TRUE(reader.next(record));
  EXPECT_EQ(record.fields.size(), 4u);
  EXPECT_EQ(record.end, (1u << 20) + 1);
}

// progress.jsonl as a directory was a bare Error (Python ProfilerException), not IsADirectoryError.
TEST(HostileFiles, ResumingWithAProgressDirectoryIsAFileErrorWithItsReason) {
  TempDir dir;
  Settings s = streamed(dir.prefix("sweep_"));
  sweep(s);
  fs::remove(s.output_prefix + "progress.jsonl");
  fs::create_directory(s.output_prefix + "progress.jsonl");
  s.resume = true;
  try {
    sweep(s);
    ADD_FAILURE() << "resumed";
  } catch (const FileError& e) {
    EXPECT_EQ(e.code(), std::errc::is_a_directory) << e.what();
    EXPECT_TRUE(has(e.what(), "it is a directory, not a file kscope wrote there")) << e.what();
  }
}

// Garbage in progress.jsonl was blamed on samples.csv.
TEST(HostileFiles, AnUnreadableProgressLineIsNamedAsSuch) {
  TempDir dir;
  Settings s = streamed(dir.prefix("sweep_"));
  s.verbosity = Verbosity::info;
  sweep(s);
  std::string progress = read(s.output_prefix + "progress.jsonl");
  progress.insert(progress.find('\n') + 1, "{garbage\n");
  write(s.output_prefix + "progress.jsonl", progress);
  s.resume = true;
  ::testing::internal::CaptureStderr();
  sweep(s);
  const std::string said = ::testing::internal::GetCapturedStderr();
  EXPECT_TRUE(has(said, "line 2 of '" + s.output_prefix + "progress.jsonl' is not a progress line kscope writes "
                        "(edited, or written by something else): the configs from there on are measured again"))
      << said;
  EXPECT_FALSE(has(said, "does not hold the samples")) << said;
}

// A sweep that failed as it started (a full disk) left an empty progress.jsonl, which refused both
// a plain re-run and resume=True.
TEST(HostileFiles, FilesThatRecordNothingDoNotHoldThePrefix) {
  TempDir dir;
  const Settings s = streamed(dir.prefix("sweep_"));
  write(s.output_prefix + "progress.jsonl", "");
  write(s.output_prefix + "samples.csv", "Annotation,n,Metric\n");
  EXPECT_EQ(sweep(s).rows().size(), 3u);
}

// A finished sweep in a read-only directory was refused without pointing to its results.
TEST(HostileFiles, AFinishedSweepInAReadOnlyDirectoryPointsToItsResults) {
  TempDir dir;
  fs::create_directory(dir.prefix("ro"));
  Settings s = streamed(dir.prefix("ro/sweep_"));
  sweep(s);
  fs::permissions(dir.prefix(""), fs::perms::all);  // reachable by the unprivileged user below
  fs::permissions(dir.prefix("ro"), fs::perms::owner_read | fs::perms::owner_exec | fs::perms::others_read |
                                        fs::perms::others_exec);
  s.resume = true;
  const std::string error = as_unprivileged([&] { return error_of([&] { sweep(s); }); });
  fs::permissions(dir.prefix("ro"), fs::perms::owner_all);
  EXPECT_TRUE(has(error, "The results of the sweep there need no writing: read them with kscope::load_results(\"" +
                             s.output_prefix + "results.json\")"))
      << error;
  // The reason is access()'s, not that of a file the hint looked for.
  EXPECT_TRUE(has(error, "' is not writable (Permission denied); give a prefix in a writable directory")) << error;
}

// Prefixes under /dev/null or a regular file said "cannot create its directory (File exists)";
// /dev/null itself wrote /dev/nullmanifest.json and friends into /dev.
TEST(HostileFiles, APrefixThatIsADeviceOrUnderAFileIsRefused) {
  TempDir dir;
  write(dir.prefix("file"), "x");
  EXPECT_EQ(error_of([&] { sweep(streamed(dir.prefix("file/sweep_"))); }),
            "Settings::output_prefix '" + dir.prefix("file/sweep_") + "': its directory '" + dir.prefix("file") +
                "' is a regular file, not a directory; give a prefix in a directory");
  EXPECT_EQ(error_of([&] { sweep(streamed("/dev/full/sweep_")); }),
            "Settings::output_prefix '/dev/full/sweep_': its directory '/dev/full' is a character device, not a "
            "directory; give a prefix in a directory");
  EXPECT_EQ(error_of([&] { sweep(streamed("/dev/null")); }),
            "Settings::output_prefix '/dev/null' is a character device: an output prefix starts the names of the files "
            "written beside it ('/dev/nullresults.json', ...) or names a directory to write them in; give one of those");
  EXPECT_FALSE(fs::exists("/dev/nullmanifest.json"));
}

// Bad case 3: a <prefix>lock that was a link made the sweep write its lock record into the link's
// target and delete the link: in a shared directory, as root, any file could be destroyed.
TEST(HostileFiles, TheLockIsNeverALinkNorAFileWithOtherNames) {
  TempDir dir;
  const std::string victim = dir.prefix("victim"), prefix = dir.prefix("sweep_");
  write(victim, "precious\n");
  fs::create_symlink(victim, prefix + "lock");
  const std::string error = error_of<FileError>([&] { sweep(streamed(prefix)); });
  EXPECT_EQ(error, "cannot use '" + prefix + "lock' as the lock of Settings::output_prefix: it is a symbolic link, not a "
                   "lock file kscope made. kscope never writes through such a path (it would write into, then remove, "
                   "what it names): remove it, or give another Settings::output_prefix");
  EXPECT_EQ(read(victim), "precious\n");
  EXPECT_TRUE(fs::is_symlink(prefix + "lock"));

  fs::remove(prefix + "lock");
  fs::create_hard_link(victim, prefix + "lock");
  EXPECT_TRUE(has(error_of<FileError>([&] { sweep(streamed(prefix)); }), "it is a file with other names (a hard link)"));
  EXPECT_EQ(read(victim), "precious\n");
  EXPECT_TRUE(fs::exists(prefix + "lock"));
}

// A temporary of a whole-file write that someone replaced by a link is neither written through nor
// removed (the link is not kscope's).
TEST(HostileFiles, AWholeFileWriteNeverRemovesALinkPutInPlaceOfItsTemporary) {
  TempDir dir;
  const std::string target = dir.prefix("out.csv"), victim = dir.prefix("victim");
  write(victim, "precious\n");
  std::string swapped;
  EXPECT_THROW(detail::write_whole(target, [&](std::ostream& out) {
    for (const auto& entry : fs::directory_iterator(dir.prefix("")))
      if (has(entry.path().filename().string(), "out.csv.tmp-")) swapped = entry.path().string();
    fs::remove(swapped);
    fs::create_symlink(victim, swapped);
    out << "written";
    throw std::runtime_error("stop");
  }), std::runtime_error);
  ASSERT_FALSE(swapped.empty());
  EXPECT_TRUE(fs::is_symlink(swapped));
  EXPECT_EQ(read(victim), "precious\n");
}

// Bad case 4: kscope merge replaced a measured sweep's results silently (leaving its manifest and
// progress), wrote /dev/nullresults.json into /dev, and replaced an earlier merge unasked. Merged
// results are a kind of their own: never written over a sweep (even with --overwrite), and an
// earlier merge is moved aside, or replaced with --overwrite.
TEST(HostileFiles, MergedResultsNeverReplaceASweepOrAnEarlierMergeUnasked) {
  TempDir dir;
  const Settings s = two_shards(dir.prefix("sweep_"));
  const std::string measured = dir.prefix("measured_");
  sweep(streamed(measured));
  const std::string before = read(measured + "results.json");
  for (const bool overwrite : {false, true}) {
    std::ostringstream out, err;
    std::vector<std::string> args{measured, s.output_prefix};
    if (overwrite) args.push_back("--overwrite");
    EXPECT_EQ(merge_command(args, out, err), 2);
    EXPECT_TRUE(has(err.str(), "kscope merge: OUT_PREFIX '" + measured + "' holds a finished sweep (" + measured +
                                   "manifest.json, " + measured + "progress.jsonl, " + measured + "samples.csv, " +
                                   measured + "summary.csv, " + measured + "results.json), not the files of merged "
                                   "results: kscope never continues, replaces or moves another kind of result's "
                                   "files. Give this merge another OUT_PREFIX, or move those files away"))
        << err.str();
    EXPECT_EQ(read(measured + "results.json"), before);
    EXPECT_TRUE(fs::exists(measured + "manifest.json"));
  }

  std::ostringstream out, err;
  const std::string merged = dir.prefix("merged_");
  EXPECT_EQ(merge_command({merged, s.output_prefix}, out, err), 0) << err.str();
  const std::string first = read(merged + "results.json");
  std::ostringstream again;
  EXPECT_EQ(merge_command({merged, s.output_prefix}, out, again), 0) << again.str();
  EXPECT_EQ(read(merged + "results.json.~1~"), first);
  EXPECT_EQ(merge_command({merged, s.output_prefix, "--overwrite"}, out, err), 0) << err.str();
  EXPECT_FALSE(fs::exists(merged + "results.json.~2~"));
  // The merge of a resumed sweep replaces the merge it made before (Python's torchrun rank 0).
  EXPECT_NO_THROW(write_merged(merge_files({s.output_prefix}), merged, false, true));

  std::ostringstream device;
  EXPECT_EQ(merge_command({"/dev/null", s.output_prefix}, out, device), 2);
  EXPECT_TRUE(has(device.str(), "'/dev/null' is a character device")) << device.str();
  EXPECT_FALSE(fs::exists("/dev/nullresults.json"));
}

// Merging one shard's file said its sibling was "missing: run it" though it was beside it; an
// unsharded prefix said "no results file"; shards of different sweeps did not say what differed.
TEST(HostileFiles, MergeRefusalsPointToWhatIsThere) {
  TempDir dir;
  const Settings s = two_shards(dir.prefix("sweep_"));
  EXPECT_EQ(error_of([&] { merge_files({s.output_prefix + "shard-0-of-2-results.json"}); }),
            "shard 1/2 of the sweep is missing from the files given, but '" + s.output_prefix +
                "shard-1-of-2-results.json' is beside them: give the sweep's prefix '" + s.output_prefix +
                "', which stands for all its shards' files, or every shard's file");

  const std::string whole = dir.prefix("whole_");
  sweep(streamed(whole));
  EXPECT_EQ(error_of([&] { merge_files({whole}); }),
            "nothing to merge under '" + whole + "': it holds the results of a sweep measured without shards ('" +
                whole + "results.json'), which are whole already: read them with kscope::load_results(\"" + whole +
                "results.json\")");
  // A directory holding a profiled function's calls (Python's <function>-<n>- infixes) points to them too.
  fs::create_directory(dir.prefix("calls"));
  sweep(streamed(dir.prefix("calls/f-0-")));
  sweep(streamed(dir.prefix("calls/f-1-")));
  EXPECT_EQ(error_of([&] { merge_files({dir.prefix("calls")}); }),
            "nothing to merge under '" + dir.prefix("calls") + "': it holds the results of 2 sweeps measured without "
            "shards ('" + dir.prefix("calls/f-0-results.json") + "', '" + dir.prefix("calls/f-1-results.json") +
            "'), which are whole already: read each with kscope::load_results(\"" +
            dir.prefix("calls/f-0-results.json") + "\")");

  Settings other = streamed(dir.prefix("other_"));
  other.shard = Shard{1, 2};
  SimulatedBackend backend;
  profile_with_backend(Sweep().axis("n", {1, 2, 4}), other, [&](const Config&) {
    Annotation a("k");
    backend.launch("kern", 10);
  }, backend);
  EXPECT_TRUE(has(error_of([&] {
    merge_files({s.output_prefix + "shard-0-of-2-results.json", other.output_prefix + "shard-1-of-2-results.json"});
  }), "measured different sweeps (config 3 is (n=4) and (n=3))"));
}

// The compare gate passed a candidate whose every run failed (all NaN): exit 0.
TEST(HostileFiles, TheCompareGateFailsACandidateWithoutAValidRun) {
  using namespace kscope::testing_fixtures;
  TempDir dir;
  make({"n"}, {{"spin", {1024}, "cupti__kernel_duration", "ns", around(20000, 12)}}).write_json(dir.prefix("b.json"));
  make({"n"}, {{"spin", {1024}, "cupti__kernel_duration", "ns", std::vector<double>(12, NAN)}})
      .write_json(dir.prefix("c.json"));
  std::ostringstream out, err;
  EXPECT_EQ(compare_command({dir.prefix("b.json"), dir.prefix("c.json")}, out, err, false), 2) << out.str();
  EXPECT_TRUE(has(err.str(), "kscope compare: the candidate has no valid sample in 1 row (spin n=1024 "
                             "cupti__kernel_duration): every run there is NaN"))
      << err.str();
}

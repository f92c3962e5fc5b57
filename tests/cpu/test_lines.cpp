// Line sampling (profile_lines) on the simulated backend's synthetic PC samples: the line table and
// its attribution (inlined code on the calling line, code without line information by offset), the
// raw and per-kernel tables, the listing, the file round trip, the comparison and every refusal.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "core/model/line_rows.hpp"
#include "kscope/annotation.hpp"
#include "lines_command.hpp"
#include "kscope/detail/session_headline.hpp"
#include "kscope/lines.hpp"
#include "kscope/testing.hpp"
#include "test_support.hpp"

namespace {

using kscope::Cell;
using kscope::LineResults;
using kscope::LineSampling;
using kscope::SourceLocation;
using kscope::Table;
using kscope::testing::SimulatedBackend;
using kscope::testing::SimulatedInstruction;
using kscope_test::error_of;

const char* kFile = "/src/chase.cu";
const char* kSource =
    "__device__ float helper(float a, float b) {\n"  // 1
    "  return a * b + 1.0f;\n"                       // 2
    "}\n"                                            // 3
    "__global__ void chase(const int* next, int n) {\n"  // 4
    "  int i = threadIdx.x;\n"                       // 5
    "  float acc = 0;\n"                             // 6
    "  for (int k = 0; k < n; ++k) {\n"              // 7
    "    i = next[i];\n"                             // 8
    "    acc = helper(acc, i);\n"                    // 9
    "  }\n"                                          // 10
    "}\n";                                           // 11

// The dependent load on line 8 waits for memory; the helper inlined on line 9 waits on its FMA; a
// libdevice-like call without line information; the loop's branch.
std::vector<SimulatedInstruction> chase_code(double load_weight = 60) {
  const SourceLocation load{kFile, 8, "chase"}, call{kFile, 9, "chase"}, body{kFile, 2, "helper"},
      loop{kFile, 7, "chase"};
  return {
      {0x100, "LDG.E R2, desc[UR4][R2.64]", {load}, {{"long_scoreboard", load_weight}, {"selected", 2}}, "", 100, 3200},
      {0x110, "FFMA R5, R5, R2, 1", {body, call}, {{"wait", 20}, {"selected", 4}}, "", 100, 1600},
      {0x120, "ISETP.GE.AND P0, PT, R7, R6, PT", {loop}, {{"branch_resolving", 4}}, "", 100, 3200},
      {0x40, "MUFU.RCP R9, R8", {}, {{"short_scoreboard", 10}}, "__internal_fdividef", 0, 0},
  };
}

struct Sampled {
  SimulatedBackend sim;
  Sampled() {
    sim.set_code("chase", chase_code());
    sim.set_source_text(kFile, kSource);
  }
  LineResults run(LineSampling sampling = {}, kscope::Settings settings = kscope_test::quiet(3), double ns = 50'000) {
    return kscope::profile_lines_with_backend(
        kscope::Sweep().axis("n", {1, 2}), settings,
        [&](const kscope::Config& c) {
          kscope::Annotation a("chase");
          sim.launch("chase", ns * static_cast<double>(c.get<int>("n")));
        },
        sim, sampling);
  }
};

// Column `name` of row `r`.
const Cell& at(const Table& t, std::size_t r, const std::string& name) { return t.rows.at(r).at(t.column(name)); }
std::int64_t integer(const Cell& c) { return std::get<std::int64_t>(c); }
double real(const Cell& c) { return std::get<double>(c); }
const std::string& text(const Cell& c) { return std::get<std::string>(c); }

// The samples the simulated GPU gives a launch: cycles * SMs / period.
std::uint64_t expected_samples(double ns, unsigned period_log2) {
  return static_cast<std::uint64_t>(std::llround(ns * 1.98 * 132 / std::ldexp(1.0, static_cast<int>(period_log2))));
}

TEST(Lines, EachKernelsLinesBySamplesWithTheirStallReasons) {
  Sampled s;
  const LineResults r = s.run();
  const Table t = r.lines_table();
  ASSERT_FALSE(t.rows.empty());
  EXPECT_EQ(t.columns.front(), "Annotation");
  EXPECT_EQ(t.columns.at(1), "n");
  // The first config's kernel: the load's line first, long_scoreboard dominant.
  EXPECT_EQ(integer(at(t, 0, "n")), 1);
  EXPECT_EQ(integer(at(t, 0, "Line")), 8);
  EXPECT_EQ(text(at(t, 0, "StallReason")), "long_scoreboard");
  EXPECT_EQ(text(at(t, 0, "LineText")), "    i = next[i];");
  EXPECT_EQ(text(at(t, 0, "File")), kFile);
  EXPECT_EQ(text(at(t, 0, "Kernel")), "chase");
  EXPECT_EQ(text(at(t, 0, "Function")), "chase");
  // Weights 62 of 100 on the load's line: 60 long_scoreboard, 2 selected.
  EXPECT_NEAR(real(at(t, 0, "LineSharePct")), 62.0, 0.1);
  EXPECT_NEAR(real(at(t, 0, "SharePct")), 60.0, 0.1);

  // Every sample of the config's kernel in exactly one row: shares add up to 100%.
  std::map<std::int64_t, double> share;
  std::map<std::int64_t, std::int64_t> samples;
  for (std::size_t i = 0; i < t.rows.size(); ++i) {
    share[integer(at(t, i, "n"))] += real(at(t, i, "SharePct"));
    samples[integer(at(t, i, "n"))] += integer(at(t, i, "Samples"));
  }
  EXPECT_NEAR(share[1], 100.0, 1e-9);
  EXPECT_NEAR(share[2], 100.0, 1e-9);
  // Three recorded runs (warm-ups unsampled) of a 50 us and a 100 us kernel at 2^10 cycles.
  EXPECT_EQ(samples[1], static_cast<std::int64_t>(3 * expected_samples(50'000, 10)));
  EXPECT_EQ(samples[2], static_cast<std::int64_t>(3 * expected_samples(100'000, 10)));
}

// A frame of inlined code names its function and line; Triton's helpers, scoped in the kernel,
// have no function of their own and read as their file and line.
TEST(Lines, AnInlinedFrameWithoutAFunctionReadsAsItsFileAndLine) {
  using kscope::SourceLocation;
  EXPECT_EQ(kscope::detail::frame_text({"/k/chase.cu", 2, "helper"}), "helper (chase.cu:2)");
  EXPECT_EQ(kscope::detail::frame_text({"/venv/triton/language/standard.py", 170, ""}), "standard.py:170");
  const std::vector<SourceLocation> chain{{"/venv/triton/language/standard.py", 170, ""},
                                          {"/venv/triton/language/standard.py", 184, ""},
                                          {"/home/user/softmax.py", 12, "softmax_kernel"}};
  EXPECT_EQ(kscope::detail::inlined_from_text(chain), "standard.py:184 > standard.py:170");
}

TEST(Lines, InlinedCodeOnTheCallingLineWithItsChainAndCodeWithoutLinesByOffset) {
  Sampled s;
  const Table t = s.run().lines_table();
  bool call_line = false, no_line = false;
  for (std::size_t i = 0; i < t.rows.size(); ++i) {
    if (integer(at(t, i, "n")) != 1) continue;
    if (std::holds_alternative<std::int64_t>(at(t, i, "Line")) && integer(at(t, i, "Line")) == 9) {
      call_line = true;
      EXPECT_EQ(text(at(t, i, "InlinedFrom")), "helper (chase.cu:2)");
      EXPECT_EQ(text(at(t, i, "LineText")), "    acc = helper(acc, i);");
      EXPECT_TRUE(std::holds_alternative<std::monostate>(at(t, i, "PcOffset")));
    }
    if (std::holds_alternative<std::monostate>(at(t, i, "Line"))) {
      no_line = true;  // never dropped: its function and offset instead of a line
      EXPECT_EQ(text(at(t, i, "Function")), "__internal_fdividef");
      EXPECT_EQ(integer(at(t, i, "PcOffset")), 0x40);
      EXPECT_EQ(text(at(t, i, "File")), "");
      EXPECT_EQ(text(at(t, i, "StallReason")), "short_scoreboard");
    }
  }
  EXPECT_TRUE(call_line);
  EXPECT_TRUE(no_line);
}

TEST(Lines, TheRawTableKeepsEachInstructionWithItsSassAndInnermostLine) {
  Sampled s;
  const Table t = s.run().instructions_table();
  bool fma = false;
  for (std::size_t i = 0; i < t.rows.size(); ++i) {
    if (integer(at(t, i, "PcOffset")) != 0x110 || integer(at(t, i, "n")) != 1) continue;
    fma = true;
    EXPECT_EQ(text(at(t, i, "Sass")), "FFMA R5, R5, R2, 1");
    EXPECT_EQ(integer(at(t, i, "Line")), 2);  // where the code was written
    EXPECT_EQ(text(at(t, i, "InlinedAt")), "chase (chase.cu:9)");
    EXPECT_EQ(integer(at(t, i, "InstExecuted")), 300);  // 3 runs of 100
  }
  EXPECT_TRUE(fma);
}

TEST(Lines, SassMetricsGiveEachLinesExecutedInstructionsAndThreadEfficiency) {
  Sampled s;
  const Table t = s.run().lines_table();
  for (std::size_t i = 0; i < t.rows.size(); ++i) {
    if (!std::holds_alternative<std::int64_t>(at(t, i, "Line"))) continue;
    if (integer(at(t, i, "Line")) == 8) {
      EXPECT_NEAR(real(at(t, i, "ThreadEfficiencyPct")), 100.0, 1e-9);
    } else if (integer(at(t, i, "Line")) == 9) {
      EXPECT_NEAR(real(at(t, i, "ThreadEfficiencyPct")), 50.0, 1e-9);
    }
  }
  SimulatedBackend without;
  without.set_sass_metrics_supported(false);
  without.set_code("chase", chase_code());
  const LineResults r = kscope::profile_lines_with_backend(
      kscope::Sweep(), kscope_test::quiet(1),
      [&](const kscope::Config&) {
        kscope::Annotation a("chase");
        without.launch("chase", 50'000);
      },
      without);
  const Table u = r.lines_table();
  EXPECT_TRUE(std::holds_alternative<std::monostate>(at(u, 0, "InstExecuted")));
  ASSERT_FALSE(r.code().notes.empty());
  EXPECT_NE(r.code().notes[0].find("SASS metrics"), std::string::npos);
}

TEST(Lines, KernelsTableAndTheSweepsTable) {
  Sampled s;
  const LineResults r = s.run();
  const Table k = r.kernels_table();
  ASSERT_EQ(k.rows.size(), 2u);
  EXPECT_EQ(integer(at(k, 0, "Launches")), 3);
  EXPECT_EQ(integer(at(k, 0, "SamplingPeriodCycles")), 1024);
  EXPECT_EQ(integer(at(k, 0, "Samples")), static_cast<std::int64_t>(3 * expected_samples(50'000, 10)));
  EXPECT_EQ(integer(at(k, 0, "Dropped")), 0);
  EXPECT_EQ(text(at(k, 0, "Note")), "");
  // The sweep's own table: the simulated backend's durations, one row per annotation and config.
  EXPECT_EQ(r.sweep().rows().size(), 2u);
}

// The table is its column table: Annotation, the axis n, then the other columns, each cell of its type.
void expect_columns(const Table& t, const std::vector<kscope::ColumnSpec>& specs) {
  std::vector<std::string> header{specs.front().name, "n"};
  for (std::size_t i = 1; i < specs.size(); ++i) header.push_back(specs[i].name);
  ASSERT_EQ(t.columns, header);
  ASSERT_FALSE(t.rows.empty());
  using T = kscope::ColumnType;
  for (const auto& row : t.rows)
    for (const auto& spec : specs) {
      const Cell& c = row.at(t.column(spec.name));
      const bool empty = std::holds_alternative<std::monostate>(c);
      const bool typed = spec.type == T::text ? std::holds_alternative<std::string>(c)
                         : spec.type == T::integer ? std::holds_alternative<std::int64_t>(c)
                         : spec.type == T::optional_integer ? empty || std::holds_alternative<std::int64_t>(c)
                         : spec.type == T::real ? empty || std::holds_alternative<double>(c)
                                                : false;
      EXPECT_TRUE(typed) << spec.name << " of type " << kscope::to_string(spec.type);
    }
}

TEST(Lines, EachTableIsItsColumnTable) {
  Sampled a, b;
  b.sim.set_code("chase", chase_code(10));
  const LineResults r = a.run();
  expect_columns(r.lines_table(), kscope::line_columns());
  expect_columns(r.instructions_table(), kscope::instruction_columns());
  expect_columns(r.kernels_table(), kscope::line_kernel_columns());
  expect_columns(kscope::compare_lines(r, b.run()), kscope::line_comparison_columns());
}

TEST(Lines, TooCoarseAPeriodAndDroppedSamplesAreSaidPerKernel) {
  Sampled s;
  s.sim.set_dropped_samples(7);
  LineSampling coarse;
  coarse.period_log2 = 20;  // a 5 us kernel gets about 1 sample per launch
  const LineResults r = s.run(coarse, kscope_test::quiet(2), 5'000);
  const Table k = r.kernels_table();
  const std::string note = text(at(k, 0, "Note"));
  EXPECT_NE(note.find("too coarse"), std::string::npos) << note;
  EXPECT_NE(note.find("LineSampling::period_log2 = 17"), std::string::npos) << note;
  EXPECT_NE(note.find("14 samples were dropped"), std::string::npos) << note;
  EXPECT_EQ(integer(at(k, 0, "Dropped")), 14);
  EXPECT_NE(r.listing().find("too coarse"), std::string::npos);
}

TEST(Lines, ListingShowsEachKernelsTopLinesWithTheirDominantStall) {
  Sampled s;
  const LineResults r = s.run();
  const std::string listing = r.listing(2);
  // The session's one headline first.
  EXPECT_EQ(listing.rfind("kscope lines: " + kscope::detail::session_headline(r.sweep().session()) + "\n", 0), 0u)
      << listing;
  EXPECT_NE(listing.find("chase [n=1]  chase"), std::string::npos) << listing;
  EXPECT_NE(listing.find("chase.cu:8"), std::string::npos) << listing;
  EXPECT_NE(listing.find("long_scoreboard (97%)"), std::string::npos) << listing;
  EXPECT_NE(listing.find("i = next[i];"), std::string::npos) << listing;
  EXPECT_EQ(listing.find("chase.cu:7"), std::string::npos) << "top 2 only:\n" << listing;
  std::ostringstream streamed;
  streamed << s.run();
  EXPECT_NE(streamed.str().find("acc = helper(acc, i);"), std::string::npos);
}

TEST(Lines, SavedAndLoadedAlike) {
  Sampled s;
  const LineResults r = s.run();
  kscope_test::TempDir dir;
  const std::string path = dir.prefix("lines.json");
  r.write_json(path);
  const LineResults back = kscope::load_line_results(path);
  EXPECT_EQ(back.lines_table().rows, r.lines_table().rows);
  EXPECT_EQ(back.instructions_table().rows, r.instructions_table().rows);
  EXPECT_EQ(back.kernels_table().rows, r.kernels_table().rows);
  EXPECT_EQ(back.code().sources, r.code().sources);
  EXPECT_EQ(back.sweep().rows().size(), r.sweep().rows().size());
  // The file is a results file: load_results reads its sweep.
  EXPECT_EQ(kscope::load_results(path).rows().size(), 2u);
  // A plain results file is not a line results file, and says what to do.
  const std::string plain = dir.prefix("plain.json");
  r.sweep().write_json(plain);
  EXPECT_NE(error_of([&] { kscope::load_line_results(plain); }).find("not of line sampling"), std::string::npos);
}

TEST(Lines, TheCommandLinePrintsASavedSamplingOrComparesTwo) {
  Sampled a, b;
  b.sim.set_code("chase", chase_code(10));
  kscope_test::TempDir dir;
  a.run().write_json(dir.prefix("a.json"));
  b.run().write_json(dir.prefix("b.json"));
  std::ostringstream out, err;
  EXPECT_EQ(lines_command({dir.prefix("a.json"), "--top", "1"}, out, err), 0) << err.str();
  EXPECT_NE(out.str().find("chase.cu:8"), std::string::npos) << out.str();
  EXPECT_EQ(out.str().find("chase.cu:9"), std::string::npos) << "--top 1:\n" << out.str();
  out.str("");
  EXPECT_EQ(lines_command({dir.prefix("a.json"), dir.prefix("b.json")}, out, err), 0) << err.str();
  EXPECT_NE(out.str().find("DeltaPct"), std::string::npos) << out.str();
  EXPECT_EQ(lines_command({dir.prefix("missing.json")}, out, err), 2);
  EXPECT_NE(err.str().find("kscope lines:"), std::string::npos);
  EXPECT_EQ(lines_command({}, out, err), 64);
}

TEST(Lines, ComparedLineByLine) {
  Sampled a, b;
  b.sim.set_code("chase", chase_code(10));  // the load made cheaper
  const Table t = kscope::compare_lines(a.run(), b.run());
  ASSERT_FALSE(t.rows.empty());
  // The largest change first: the load's line lost share.
  EXPECT_EQ(integer(at(t, 0, "Line")), 8);
  EXPECT_LT(real(at(t, 0, "DeltaPct")), -20.0);
  EXPECT_NEAR(real(at(t, 0, "DeltaPct")), real(at(t, 0, "SharePct")) - real(at(t, 0, "BaselineSharePct")), 1e-9);
  EXPECT_EQ(text(at(t, 0, "DominantStall")), "long_scoreboard");
}

TEST(Lines, IgnoredKernelsLeaveTheLineTablesToo) {
  Sampled s;
  kscope::Settings settings = kscope_test::quiet(2);
  settings.ignore_kernel_list = {"warmup_copy"};
  const LineResults r = kscope::profile_lines_with_backend(
      kscope::Sweep(), settings,
      [&](const kscope::Config&) {
        kscope::Annotation a("chase");
        s.sim.launch("warmup_copy", 10'000);
        s.sim.launch("chase", 50'000);
      },
      s.sim);
  ASSERT_EQ(r.code().kernels.size(), 1u);
  EXPECT_EQ(r.code().kernels[0].kernel, "chase");
  for (const auto& in : r.code().instructions) EXPECT_EQ(in.kernel, "chase");
  EXPECT_EQ(r.sweep().rows().at(0).kernel, "chase");
}

TEST(Lines, RefusedWithTheFix) {
  Sampled s;
  LineSampling bad;
  bad.period_log2 = 3;
  EXPECT_NE(error_of([&] { s.run(bad); }).find("LineSampling::period_log2 must be from 5 to 31"), std::string::npos);
  kscope::Settings prefixed = kscope_test::quiet();
  prefixed.output_prefix = "/tmp/never_";
  EXPECT_NE(error_of([&] { s.run({}, prefixed); }).find("LineResults::write_json"), std::string::npos);
  kscope::Settings metrics = kscope_test::quiet();
  metrics.metrics = {"dram__bytes_read.sum"};
  EXPECT_NE(error_of([&] { s.run({}, metrics); }).find("Settings::metrics does not work with line sampling"),
            std::string::npos);
  kscope::Settings other = kscope_test::quiet();
  other.backend = kscope::Backend::cupti;
  EXPECT_NE(error_of([&] { kscope::profile_lines(kscope::Sweep(), other, [](const kscope::Config&) {}); })
                .find("leave Settings::backend unset"),
            std::string::npos);
  s.sim.deny_sampling("ERR_NVGPUCTRPERM: not permitted");
  EXPECT_EQ(error_of<kscope::BackendError>([&] { s.run(); }), "ERR_NVGPUCTRPERM: not permitted");
}

TEST(Lines, StallReasonsHaveNsightComputesNamesAndADescription) {
  EXPECT_EQ(kscope::stall_reason_name("smsp__pcsamp_warps_issue_stalled_long_scoreboard"), "long_scoreboard");
  EXPECT_EQ(kscope::stall_reason_name("barrier"), "barrier");
  std::set<std::string> names;
  for (const auto& r : kscope::stall_reasons()) {
    EXPECT_FALSE(r.description.empty()) << r.name;
    EXPECT_TRUE(names.insert(r.name).second) << r.name;
  }
  for (const char* n : {"long_scoreboard", "barrier", "math_pipe_throttle", "wait", "selected", "short_scoreboard"})
    EXPECT_TRUE(names.contains(n)) << n;
}

}  // namespace

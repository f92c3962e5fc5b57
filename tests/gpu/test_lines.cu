// Line sampling on real kernels of known hot lines (lines_kernels.cu): the dependent load's line
// first with long_scoreboard, __syncthreads with barrier, a dependent FMA chain with a dependency or
// math-pipe stall; inlined code on its calling line; code without line information by offset; the
// SASS metrics' exact instruction counts, in every profile of the process; a too-coarse period said.
// Each kernel's time is dominated by its line by construction, so the bounds are wide of what the
// hardware can produce.
#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "gpu_test_support.hpp"
#include "kscope/kscope.hpp"
#include "kscope/lines.hpp"
#include "kscope/metrics.hpp"
#include "lines_kernels.hpp"

namespace {

using namespace kscope_lines_test;

struct Line {
  std::int64_t number = 0;       // 0: no line information
  std::string file, function, dominant, inlined_from;
  double share_pct = 0;          // of the kernel's samples
  double dominant_pct = 0;       // of the line's samples
  std::int64_t samples = 0, pc_offset = -1;
  std::optional<std::int64_t> executed;
  std::optional<double> thread_efficiency;
};

template <typename T>
std::optional<T> optional(const kscope::Cell& c) {
  if (const T* v = std::get_if<T>(&c)) return *v;
  return std::nullopt;
}

// The kernel's lines, most sampled first (the line table's first row of each line is its dominant reason).
std::vector<Line> lines_of(const kscope::LineResults& r, const std::string& kernel) {
  const kscope::Table t = r.lines_table();
  auto at = [&](std::size_t row, const char* c) -> const kscope::Cell& { return t.rows[row][t.column(c)]; };
  std::vector<Line> out;
  std::set<std::tuple<std::int64_t, std::string, std::int64_t>> seen;
  for (std::size_t i = 0; i < t.rows.size(); ++i) {
    if (std::get<std::string>(at(i, "Kernel")) != kernel) continue;
    Line l;
    l.number = optional<std::int64_t>(at(i, "Line")).value_or(0);
    l.pc_offset = optional<std::int64_t>(at(i, "PcOffset")).value_or(-1);
    l.file = std::get<std::string>(at(i, "File"));
    if (!seen.insert({l.number, l.file, l.pc_offset}).second) continue;
    l.function = std::get<std::string>(at(i, "Function"));
    l.dominant = std::get<std::string>(at(i, "StallReason"));
    l.inlined_from = std::get<std::string>(at(i, "InlinedFrom"));
    l.share_pct = std::get<double>(at(i, "LineSharePct"));
    l.samples = std::get<std::int64_t>(at(i, "LineSamples"));
    l.dominant_pct = 100.0 * static_cast<double>(std::get<std::int64_t>(at(i, "Samples"))) / static_cast<double>(l.samples);
    l.executed = optional<std::int64_t>(at(i, "InstExecuted"));
    l.thread_efficiency = optional<double>(at(i, "ThreadEfficiencyPct"));
    out.push_back(l);
  }
  return out;
}

std::string describe(const std::vector<Line>& lines) {
  std::string out;
  for (const Line& l : lines)
    out += "\n  line " + std::to_string(l.number) + " " + std::to_string(l.share_pct) + "% " + l.dominant + " (" +
           std::to_string(l.dominant_pct) + "%) " + l.function + " " + l.inlined_from;
  return out;
}

kscope::Settings quiet(std::size_t runs = 5) {
  kscope::Settings s;
  s.runs = runs;
  s.warmup_runs = 1;
  s.verbosity = kscope::Verbosity::quiet;
  return s;
}

bool sass_counted_in_this_process = false;  // by any profile so far

template <typename Launch>
kscope::LineResults sample(Launch launch, std::size_t runs = 5, kscope::LineSampling sampling = {}) {
  kscope::LineResults r = kscope::profile_lines(kscope::Sweep(), quiet(runs), [&](const kscope::Config&) {
    kscope::Annotation region("k");
    launch();
  }, sampling);
  sass_counted_in_this_process = sass_counted_in_this_process || r.code().sass_metrics;
  return r;
}

std::string notes_of(const kscope::LineResults& r) {
  std::string out;
  for (const auto& n : r.code().notes) out += "\n  " + n;
  return out;
}

bool same_file(const std::string& a, const std::string& b) {
  auto base = [](const std::string& p) { return p.substr(p.find_last_of('/') + 1); };
  return base(a) == base(b);
}

TEST(Lines, DependentLoadLineFirstWithLongScoreboard) {
  KSCOPE_REQUIRE_GPU();
  const Chase chase;
  const kscope::LineResults r = sample([&] { chase.launch(20000); });
  const std::vector<Line> lines = lines_of(r, kChaseKernel);
  ASSERT_FALSE(lines.empty()) << r.listing();
  EXPECT_EQ(lines[0].number, marked_line("LOAD")) << describe(lines);
  EXPECT_TRUE(same_file(lines[0].file, kernels_file())) << lines[0].file;
  EXPECT_EQ(lines[0].dominant, "long_scoreboard") << describe(lines);
  EXPECT_GT(lines[0].share_pct, 50.0) << describe(lines);
  std::cout << r.listing(5) << "\n";
}

TEST(Lines, SyncthreadsLineFirstWithBarrier) {
  KSCOPE_REQUIRE_GPU();
  kscope_test::DeviceFloats scratch(132 * 1024);
  const kscope::LineResults r = sample([&] { launch_barrier_bound(scratch.get(), 2000); });
  const std::vector<Line> lines = lines_of(r, "kscope_lines_test::barrier_bound(float*, int)");
  ASSERT_FALSE(lines.empty()) << r.listing();
  // A warp waiting at a barrier is sampled at the instruction it waits to issue, the one after the
  // BAR: the barrier's line or the next (Nsight Compute's source counters put them there too).
  EXPECT_GE(lines[0].number, marked_line("BARRIER")) << describe(lines);
  EXPECT_LE(lines[0].number, marked_line("BARRIER") + 1) << describe(lines);
  EXPECT_EQ(lines[0].dominant, "barrier") << describe(lines);
  std::cout << r.listing(5) << "\n";
}

TEST(Lines, FmaChainLineFirstWithADependencyOrMathStall) {
  KSCOPE_REQUIRE_GPU();
  kscope_test::DeviceFloats out(kFmaBlocks * kFmaThreads);
  constexpr int kIterations = 50000;
  const kscope::LineResults r = sample([&] { launch_fma_chain(out.get(), kIterations); });
  const std::vector<Line> lines = lines_of(r, kFmaKernel);
  ASSERT_FALSE(lines.empty()) << r.listing();
  EXPECT_EQ(lines[0].number, marked_line("FMA")) << describe(lines);
  EXPECT_GT(lines[0].share_pct, 80.0) << describe(lines);
  // The samples of a line that issues every few cycles: waiting on the previous FMA, or on the pipe.
  const std::set<std::string> arithmetic{"wait", "math_pipe_throttle", "selected", "dispatch_stall"};
  EXPECT_TRUE(arithmetic.contains(lines[0].dominant)) << describe(lines);
  std::cout << r.listing(5) << "\n";

  // The SASS metrics count every instruction of the line: a whole number per iteration of each warp
  // of each run (the 16 FMAs and the few moves the compiler puts beside them), plus the few the
  // compiler files under the line outside the loop (3 a warp on an H100), all 32 threads active.
  if (!r.code().sass_metrics) {
    ASSERT_FALSE(sass_counted_in_this_process) << "an earlier profile of this process counted, this one not:" << notes_of(r);
    std::cout << "SASS metrics not measured here:" << notes_of(r) << "\n";
    return;
  }
  ASSERT_TRUE(lines[0].executed.has_value());
  const std::int64_t warps = kFmaBlocks * kFmaThreads / 32;
  const std::int64_t iterations = 5 * warps * static_cast<std::int64_t>(kIterations);
  EXPECT_LE(*lines[0].executed % iterations, 5 * warps * 8) << *lines[0].executed;
  EXPECT_GE(*lines[0].executed / iterations, kFmasPerIteration);
  EXPECT_LE(*lines[0].executed / iterations, kFmasPerIteration + 4);
  EXPECT_NEAR(lines[0].thread_efficiency.value_or(0), 100.0, 1e-9);
}

TEST(Lines, InlinedHelperCountsOnTheCallingLineWithItsChain) {
  KSCOPE_REQUIRE_GPU();
  kscope_test::DeviceFloats out(kFmaBlocks * kFmaThreads);
  const kscope::LineResults r = sample([&] { launch_fma_helper(out.get(), 50000); });
  const std::vector<Line> lines = lines_of(r, "kscope_lines_test::fma_helper(float*, int)");
  ASSERT_FALSE(lines.empty()) << r.listing();
  EXPECT_EQ(lines[0].number, marked_line("CALL")) << describe(lines);
  EXPECT_EQ(lines[0].inlined_from,
            "kscope_lines_test::sixteen_fmas (lines_kernels.cu:" + std::to_string(marked_line("HELPER")) + ")")
      << describe(lines);
  // The raw table keeps the helper's own line.
  const kscope::Table raw = r.instructions_table();
  bool helper_line = false;
  for (const auto& row : raw.rows)
    helper_line = helper_line || optional<std::int64_t>(row[raw.column("Line")]) == marked_line("HELPER");
  EXPECT_TRUE(helper_line);
}

TEST(Lines, CodeWithoutLineInformationByFunctionAndOffsetNeverDropped) {
  KSCOPE_REQUIRE_GPU();
  kscope_test::DeviceFloats out(kFmaBlocks * kFmaThreads);
  const kscope::LineResults r = sample([&] { launch_fma_without_lines(out.get(), 50000); });
  const std::string kernel = "kscope_lines_test::fma_without_lines(float*, int)";
  const std::vector<Line> lines = lines_of(r, kernel);
  ASSERT_FALSE(lines.empty()) << r.listing();
  std::int64_t in_rows = 0;
  for (const Line& l : lines) {
    EXPECT_EQ(l.number, 0);
    EXPECT_GE(l.pc_offset, 0);
    EXPECT_EQ(l.function, kernel);
    in_rows += l.samples;
  }
  std::uint64_t kernel_samples = 0;
  for (const auto& k : r.code().kernels)
    if (k.kernel == kernel) kernel_samples = k.samples;
  EXPECT_GT(kernel_samples, 0u);
  EXPECT_EQ(static_cast<std::uint64_t>(in_rows), kernel_samples);
}

TEST(Lines, ATooCoarsePeriodIsSaid) {
  KSCOPE_REQUIRE_GPU();
  kscope_test::DeviceFloats out(kFmaBlocks * kFmaThreads);
  kscope::LineSampling coarse;
  coarse.period_log2 = 24;  // a sample every 16.7M cycles: a 1000-iteration chain gets none or one
  const kscope::LineResults r = sample([&] { launch_fma_chain(out.get(), 1000); }, 3, coarse);
  bool said = false;
  for (const auto& k : r.code().kernels)
    said = said || (k.kernel == kFmaKernel && k.note.find("too coarse") != std::string::npos);
  EXPECT_TRUE(said) << r.listing();
}

TEST(Lines, TheSweepsTableCountsEachRunsSamples) {
  KSCOPE_REQUIRE_GPU();
  kscope_test::DeviceFloats out(kFmaBlocks * kFmaThreads);
  const kscope::LineResults r = sample([&] { launch_fma_chain(out.get(), 20000); }, 4);
  ASSERT_EQ(r.sweep().rows().size(), 1u);
  const auto& row = r.sweep().rows()[0];
  EXPECT_EQ(row.metric, kscope::kPcSamples);
  EXPECT_EQ(row.kernel, kFmaKernel);
  EXPECT_EQ(row.stats.count, 4u);
  EXPECT_GT(row.stats.median, 0.0);
}

// Every profile of the process gets its counts, not the first only (CUPTI's configuration of a
// device is set once per process): the same kernel profiled three times after the tests above
// counts the same instructions on its FMA line each time, exactly.
TEST(Lines, EveryProfileOfTheProcessCountsInstructions) {
  KSCOPE_REQUIRE_GPU();
  kscope_test::DeviceFloats out(kFmaBlocks * kFmaThreads);
  std::vector<std::int64_t> executed;
  for (int profile = 1; profile <= 3; ++profile) {
    const kscope::LineResults r = sample([&] { launch_fma_chain(out.get(), 20000); }, 2);
    if (!r.code().sass_metrics) {
      if (!sass_counted_in_this_process) GTEST_SKIP() << "SASS metrics not measured here:" << notes_of(r);
      FAIL() << "profile " << profile << " without SASS metrics, after one of this process with them:" << notes_of(r);
    }
    std::optional<std::int64_t> fma;
    for (const Line& l : lines_of(r, kFmaKernel))
      if (l.number == marked_line("FMA")) fma = l.executed;
    ASSERT_TRUE(fma.has_value()) << "profile " << profile << ": no count on the FMA line" << describe(lines_of(r, kFmaKernel));
    executed.push_back(*fma);
  }
  EXPECT_GT(executed[0], 0);
  EXPECT_EQ(executed[1], executed[0]);
  EXPECT_EQ(executed[2], executed[0]);
  std::cout << "FMA line's executed instructions in three profiles: " << executed[0] << ", " << executed[1] << ", "
            << executed[2] << "\n";
}

}  // namespace

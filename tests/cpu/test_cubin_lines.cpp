// The pcsampling backend's readers that need no GPU: a cubin's SASS line table with its inlined-call
// chains (data/lines/inlined.cu, built with nvcc -arch=sm_90 -lineinfo -cubin; the expected lines are
// those cuptiGetSassToSourceCorrelation gives for the innermost frame; data/lines/triton_softmax.ptx,
// Triton's shape of PTX assembled with ptxas -lineinfo), and nvdisasm's listing.
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <string>

#include "backends/pcsampling/cubin_lines.hpp"
#include "backends/pcsampling/inlined_call_sites.hpp"
#include "backends/pcsampling/sass_listing.hpp"

namespace {

using kscope::SourceLocation;
using kscope::pcsampling::CubinLines;

std::string fixture(const std::string& name) {
  std::ifstream in(std::string(KSCOPE_LINES_TEST_DATA) + "/" + name, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

const char* kChase = "_Z5chasePKiPfi";

TEST(CubinLines, EachInstructionsLineInTheKernelsOwnCode) {
  const CubinLines lines(fixture("inlined.sm_90.cubin"));
  ASSERT_TRUE(lines.problem().empty()) << lines.problem();
  ASSERT_FALSE(lines.empty());
  const auto at0 = lines.at(kChase, 0x0);
  ASSERT_EQ(at0.size(), 1u);
  EXPECT_EQ(at0[0].line, 9u);
  EXPECT_EQ(at0[0].function, "chase");
  EXPECT_TRUE(at0[0].file.ends_with("tests/cpu/data/lines/inlined.cu")) << at0[0].file;
  EXPECT_EQ(lines.at(kChase, 0xd0).at(0).line, 13u);   // i = next[i]
  EXPECT_EQ(lines.at(kChase, 0x30).at(0).line, 10u);   // between rows: the row before holds
  EXPECT_EQ(lines.at(kChase, 0x160).at(0).line, 14u);  // acc = outer(...)
}

TEST(CubinLines, InlinedCodeKeepsItsChainOfCallSites) {
  const CubinLines lines(fixture("inlined.sm_90.cubin"));
  // inner's sqrt (line 3), inlined into outer at line 6, inlined into chase at line 14.
  const auto chain = lines.at(kChase, 0x140);
  ASSERT_EQ(chain.size(), 3u);
  EXPECT_EQ(chain[0].line, 3u);
  EXPECT_EQ(chain[0].function, "inner");
  EXPECT_EQ(chain[1].line, 6u);
  EXPECT_EQ(chain[1].function, "outer");
  EXPECT_EQ(chain[2].line, 14u);
  EXPECT_EQ(chain[2].function, "chase");
  EXPECT_EQ(chain[0].file, chain[2].file);
}

TEST(CubinLines, EveryFunctionOfTheCubinAndNothingForOthers) {
  const CubinLines lines(fixture("inlined.sm_90.cubin"));
  EXPECT_EQ(lines.functions(), (std::vector<std::string>{"_Z10sync_heavyPfi", kChase}));
  EXPECT_EQ(lines.at("_Z10sync_heavyPfi", 0x0).at(0).line, 18u);
  EXPECT_TRUE(lines.at("no_such_kernel", 0x10).empty());
  // Past a function's code: no line (CUPTI's correlation would name the next function's).
  const std::uint64_t size = lines.code_size(kChase);
  EXPECT_GT(size, 0x160u);
  EXPECT_FALSE(lines.at(kChase, size - 16).empty());
  EXPECT_TRUE(lines.at(kChase, size).empty());
}

TEST(CubinLines, NotACubinOrCutShortHasNoLinesAndSaysWhy) {
  EXPECT_TRUE(CubinLines("").empty());
  EXPECT_NE(CubinLines("not an elf at all, not at all, not at all, not at all, not at all.").problem().find("not a 64-bit"),
            std::string::npos);
  const std::string cubin = fixture("inlined.sm_90.cubin");
  const CubinLines headless(cubin.substr(0, 100));  // the section headers cut off
  EXPECT_TRUE(headless.empty());
  EXPECT_NE(headless.problem().find("could not be read"), std::string::npos) << headless.problem();
  // Cut anywhere: never a read past the end; either the lines it still holds, or why not.
  for (std::size_t cut = 64; cut < cubin.size(); cut += 97) {
    const CubinLines lines(cubin.substr(0, cut));
    EXPECT_EQ(lines.empty(), !lines.problem().empty()) << cut;
  }
}

// Triton's tl.max and tl.sum: standard.py lines inlined two deep, each chain ending on the kernel's
// own line that called the helper (the line a sample is filed under), also where a stretch of the
// helper comes back later without its call sites repeated.
TEST(CubinLines, TritonHelpersEndOnTheCallingLineOfTheKernelsFile) {
  const CubinLines lines(fixture("triton_softmax.sm_90.cubin"));
  ASSERT_TRUE(lines.problem().empty()) << lines.problem();
  EXPECT_FALSE(lines.call_sites_missing("softmax_kernel"));
  auto expect_chain = [&](std::uint64_t pc, std::vector<std::uint32_t> expected, const char* called_on) {
    const auto chain = lines.at("softmax_kernel", pc);
    ASSERT_EQ(chain.size(), expected.size()) << called_on << " +" << pc;
    for (std::size_t i = 0; i < chain.size(); ++i) {
      EXPECT_EQ(chain[i].line, expected[i]) << called_on << " +" << pc << " frame " << i;
      const bool last = i + 1 == chain.size();
      EXPECT_EQ(chain[i].function, last ? "softmax_kernel" : "");  // Triton names no function for its helpers
      EXPECT_TRUE(chain[i].file.ends_with(last ? "/home/user/softmax.py" : "/triton/language/standard.py"))
          << chain[i].file;
    }
  };
  expect_chain(0x70, {163, 184, 12}, "tl.max");
  expect_chain(0xa0, {163, 184, 12}, "tl.max");
  expect_chain(0xc0, {163, 184, 12}, "tl.max, again after line 12's own code");
  expect_chain(0x120, {263, 293, 14}, "tl.sum");
  expect_chain(0x150, {263, 293, 14}, "tl.sum");
  expect_chain(0xb0, {12}, "line 12's own code");
  expect_chain(0x160, {15}, "line 15");
}

// The same kernel from a compiler that records no call sites: the helper's lines are all there is,
// and the reader says so (the backend's note) instead of passing them off as the kernel's.
TEST(CubinLines, InlinedCodeWithoutCallSitesIsRecognized) {
  const CubinLines lines(fixture("triton_softmax_no_call_sites.sm_90.cubin"));
  ASSERT_TRUE(lines.problem().empty()) << lines.problem();
  EXPECT_TRUE(lines.call_sites_missing("softmax_kernel"));
  const auto at = lines.at("softmax_kernel", 0x70);
  ASSERT_EQ(at.size(), 1u);
  EXPECT_EQ(at[0].line, 163u);
  EXPECT_TRUE(at[0].file.ends_with("standard.py"));
  EXPECT_FALSE(CubinLines(fixture("inlined.sm_90.cubin")).call_sites_missing(kChase));
  EXPECT_FALSE(lines.call_sites_missing("no_such_kernel"));
}

// The call sites a cubin without them lacks, from the kernel's LLVM IR as Triton keeps it: every
// line of standard.py inlined from one line of the kernel gets its chain; one inlined from two lines
// of the kernel (tl.cdiv called twice) gets none, as does the kernel's own code.
TEST(InlinedCallSites, ChainsOfTheInlinedLinesFromTritonsLlvmIr) {
  const kscope::pcsampling::InlinedCallSites sites(fixture("triton_softmax.llir"));
  const std::string standard = "/venv/lib/python3.12/site-packages/triton/language/standard.py";
  const std::string kernel = "/home/user/softmax.py";
  auto lines_of = [](const std::vector<SourceLocation>& chain) {
    std::vector<std::uint32_t> out;
    for (const auto& f : chain) out.push_back(f.line);
    return out;
  };
  const auto max = sites.chain(standard, 163);
  EXPECT_EQ(lines_of(max), (std::vector<std::uint32_t>{163, 184, 12}));
  ASSERT_EQ(max.size(), 3u);
  EXPECT_EQ(max[0].file, standard);
  EXPECT_EQ(max[2].file, kernel);
  EXPECT_EQ(max[2].function, "softmax_kernel");
  EXPECT_EQ(max[0].function, "");  // Triton's helpers: scoped in the kernel, no function of their own
  EXPECT_EQ(lines_of(sites.chain(standard, 184)), (std::vector<std::uint32_t>{184, 12}));
  EXPECT_EQ(lines_of(sites.chain(standard, 263)), (std::vector<std::uint32_t>{263, 293, 14}));
  EXPECT_TRUE(sites.chain(standard, 40).empty());  // tl.cdiv on lines 9 and 10
  EXPECT_TRUE(sites.chain(kernel, 12).empty());
  EXPECT_TRUE(sites.chain("standard.py", 163).empty());  // files as directory/name, as the cubin names them
  EXPECT_TRUE(kscope::pcsampling::InlinedCallSites("").empty());
  EXPECT_TRUE(kscope::pcsampling::InlinedCallSites("!1 = !DILocation(line: 3, scope: !9, inlinedAt: !1)\n!2 = !{").empty());
}

TEST(CubinLines, FunctionNamesWithoutTheirSignature) {
  EXPECT_EQ(kscope::pcsampling::function_name("_Z5outerff"), "outer");
  EXPECT_EQ(kscope::pcsampling::function_name("matmul_kernel"), "matmul_kernel");
  EXPECT_EQ(kscope::pcsampling::function_name("_Z3addIfEvPT_i"), "add<float>");
}

TEST(SassListing, InstructionsByFunctionAndOffset) {
  const char* listing =
      "\t.headerflags\t@\"EF_CUDA_TEXMODE_UNIFIED EF_CUDA_64BIT_ADDRESS EF_CUDA_SM90\"\n"
      "//--------------------- .text._Z5chasePKiPfi      --------------------------\n"
      "\t.section\t.text._Z5chasePKiPfi,\"ax\",@progbits\n"
      "_Z5chasePKiPfi:\n"
      ".text._Z5chasePKiPfi:\n"
      "        /*0000*/                   LDC R1, c[0x0][0x28] ;\n"
      "        /*0010*/                   S2R R0, SR_TID.X ;\n"
      ".L_x_0:\n"
      "        /*00d0*/                   LDG.E R0, desc[UR4][R2.64] ;   /* 0x0000000402007981 */\n"
      "        /*00e0*/              @!P0 BRA `(.L_x_1) ;\n"
      ".text.other:\n"
      "        /*0000*/                   EXIT ;\n";
  const auto sass = kscope::pcsampling::parse_sass_listing(listing);
  ASSERT_EQ(sass.size(), 2u);
  EXPECT_EQ(sass.at(kChase).at(0x0), "LDC R1, c[0x0][0x28]");
  EXPECT_EQ(sass.at(kChase).at(0xd0), "LDG.E R0, desc[UR4][R2.64]");
  EXPECT_EQ(sass.at(kChase).at(0xe0), "@!P0 BRA `(.L_x_1)");
  EXPECT_EQ(sass.at("other").at(0x0), "EXIT");
  EXPECT_TRUE(kscope::pcsampling::parse_sass_listing("garbage\n/*zz*/ X ;\n").empty());
}

}  // namespace

// kscope's reader of a cubin's line table against CUPTI's own (cuptiGetSassToSourceCorrelation,
// which reads the innermost line and runs without a GPU): the same file and line for every
// instruction of every function, in the fixture and in the GPU tests' kernels built with -lineinfo.
#include <cupti_pcsampling.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>

#include "backends/pcsampling/cubin_lines.hpp"

namespace {

using kscope::pcsampling::CubinLines;

std::string read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

std::string base(const std::string& path) { return path.substr(path.find_last_of('/') + 1); }

void agrees_with_cupti(const std::string& path) {
  const std::string cubin = read(path);
  ASSERT_FALSE(cubin.empty()) << path;
  const CubinLines lines(cubin);
  ASSERT_TRUE(lines.problem().empty()) << lines.problem();
  ASSERT_FALSE(lines.functions().empty());
  std::size_t compared = 0;
  for (const std::string& function : lines.functions()) {
    for (std::uint64_t pc = 0; pc < lines.code_size(function); pc += 16) {
      CUpti_GetSassToSourceCorrelationParams p{};
      p.size = CUpti_GetSassToSourceCorrelationParamsSize;
      p.cubin = cubin.data();
      p.cubinSize = cubin.size();
      p.functionName = function.c_str();
      p.pcOffset = pc;
      const bool known = cuptiGetSassToSourceCorrelation(&p) == CUPTI_SUCCESS && p.lineNumber != 0;
      const std::string file = p.fileName ? p.fileName : "";
      std::free(p.fileName);
      std::free(p.dirName);
      if (!known) continue;
      const auto frames = lines.at(function, pc);
      ASSERT_FALSE(frames.empty()) << function << " +" << pc;
      EXPECT_EQ(frames.front().line, p.lineNumber) << function << " +" << pc;
      EXPECT_EQ(base(frames.front().file), base(file)) << function << " +" << pc;
      ++compared;
    }
  }
  EXPECT_GT(compared, 50u);
}

TEST(CubinLinesAgainstCupti, TheFixture) { agrees_with_cupti(std::string(KSCOPE_LINES_TEST_DATA) + "/inlined.sm_90.cubin"); }

TEST(CubinLinesAgainstCupti, TheGpuTestsKernels) { agrees_with_cupti(KSCOPE_LINES_KERNELS_CUBIN); }

}  // namespace

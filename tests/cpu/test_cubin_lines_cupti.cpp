// kscope's reader of a cubin's line table against CUPTI's own (cuptiGetSassToSourceCorrelation,
// which reads the innermost line and runs without a GPU): the same file and line for every
// instruction of every function, in the fixture, in the GPU tests' kernels built with -lineinfo and in
// Triton's shape of PTX assembled here, whose inlined helpers end on the kernel's calling line.
#include <cupti_pcsampling.h>
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "backends/pcsampling/cubin_lines.hpp"
#include "backends/pcsampling/cubin_store.hpp"

namespace {

using kscope::pcsampling::CubinLines;

std::string read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

std::string base(const std::string& path) { return path.substr(path.find_last_of('/') + 1); }

void agrees_with_cupti(const std::string& path, std::size_t least_compared = 50) {
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
  EXPECT_GT(compared, least_compared);
}

TEST(CubinLinesAgainstCupti, TheFixture) { agrees_with_cupti(std::string(KSCOPE_LINES_TEST_DATA) + "/inlined.sm_90.cubin"); }

TEST(CubinLinesAgainstCupti, TheGpuTestsKernels) { agrees_with_cupti(KSCOPE_LINES_KERNELS_CUBIN); }

// ptxas of this toolkit turns `.loc ... inlined_at` into the chain the reader walks: tl.max's
// standard.py lines end on softmax.py:12, tl.sum's on softmax.py:14, as the committed fixture does.
TEST(CubinLinesAgainstCupti, TritonShapedPtxAssembledHere) {
  agrees_with_cupti(KSCOPE_TRITON_SHAPED_CUBIN, 20);
  const CubinLines lines(read(KSCOPE_TRITON_SHAPED_CUBIN));
  EXPECT_FALSE(lines.call_sites_missing("softmax_kernel"));
  std::size_t max_helper = 0, sum_helper = 0;
  for (std::uint64_t pc = 0; pc < lines.code_size("softmax_kernel"); pc += 16) {
    const auto chain = lines.at("softmax_kernel", pc);
    if (chain.empty()) continue;
    EXPECT_TRUE(base(chain.back().file) == "softmax.py") << "+" << pc << ": " << chain.back().file;
    if (chain.size() > 1 && chain.back().line == 12) ++max_helper;
    if (chain.size() > 1 && chain.back().line == 14) ++sum_helper;
  }
  EXPECT_GT(max_helper, 0u);
  EXPECT_GT(sum_helper, 0u);
}

// A Triton kernel from a compiler that writes no call sites into the cubin (Triton 3.6): loaded as a
// module, found in Triton's cache by its CRC, its inlined helpers' samples go to the calling line
// through the LLVM IR (.llir) Triton keeps beside the cubin.
TEST(CubinStore, CallSitesFromTritonsLlvmIrBesideTheCubinInItsCache) {
  namespace fs = std::filesystem;
  const fs::path cache = fs::temp_directory_path() / ("kscope-triton-cache-" + std::to_string(::getpid()));
  fs::create_directories(cache / "ABCDEF");
  const std::string data = KSCOPE_LINES_TEST_DATA;
  fs::copy_file(data + "/triton_softmax_no_call_sites.sm_90.cubin", cache / "ABCDEF" / "softmax_kernel.cubin");
  fs::copy_file(data + "/triton_softmax.llir", cache / "ABCDEF" / "softmax_kernel.llir");
  ::setenv("TRITON_CACHE_DIR", cache.c_str(), 1);
  const std::string cubin = read(data + "/triton_softmax_no_call_sites.sm_90.cubin");
  auto& store = kscope::pcsampling::CubinStore::process();
  store.add(cubin.data(), cubin.size());  // as the module-loaded callback does
  const std::uint64_t crc = kscope::pcsampling::cubin_crc(cubin.data(), cubin.size());
  ASSERT_NE(crc, 0u);
  std::string why;
  const auto max = store.source(crc, "softmax_kernel", 0x70, why);
  ASSERT_EQ(max.size(), 3u) << why;
  EXPECT_EQ(max[0].line, 163u);
  EXPECT_EQ(max[1].line, 184u);
  EXPECT_EQ(max[2].line, 12u);
  EXPECT_EQ(base(max[2].file), "softmax.py");
  EXPECT_TRUE(why.empty()) << why;
  const auto sum = store.source(crc, "softmax_kernel", 0x130, why);
  ASSERT_FALSE(sum.empty());
  EXPECT_EQ(sum.back().line, 14u);
  const auto own = store.source(crc, "softmax_kernel", 0xb0, why);
  ASSERT_EQ(own.size(), 1u);
  EXPECT_EQ(own[0].line, 12u);
  fs::remove_all(cache);
}

}  // namespace

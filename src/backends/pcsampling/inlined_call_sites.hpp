#pragma once
// Where inlined code was called from, read from a kernel's LLVM IR (the .llir Triton keeps beside each
// cubin in its cache) for cubins whose line table records no call sites: LLVM's NVPTX backend before
// LLVM 22 writes only the innermost line of inlined code into the PTX, so a Triton 3.6 cubin files a
// tl.max at triton/language/standard.py with nothing leading back to the kernel. The IR still holds
// each location's chain (DILocation ... inlinedAt), from which a line of inlined code gets its call
// sites when every inlining of that line ends on the same line of the kernel; a line inlined from
// several lines of the kernel (a helper called twice) cannot be told apart and keeps its own line.
// No CUDA: the parser runs, and is tested, on any machine.
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "kscope/lines.hpp"

namespace kscope::pcsampling {

class InlinedCallSites {
 public:
  // Reads the debug metadata of LLVM IR in text form; IR without any yields no call sites.
  explicit InlinedCallSites(std::string_view llvm_ir);

  // Code written on `file`:`line` (file as directory/name), innermost first with each call site it
  // was inlined at, the last one in the kernel's own code; empty where that line was not inlined or
  // was inlined from more than one line of the kernel.
  std::vector<SourceLocation> chain(const std::string& file, std::uint32_t line) const;
  bool empty() const { return chains_.empty(); }

 private:
  std::map<std::pair<std::string, std::uint32_t>, std::vector<SourceLocation>> chains_;
};

}  // namespace kscope::pcsampling

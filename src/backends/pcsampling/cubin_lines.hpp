#pragma once
// A cubin's SASS line table: for an instruction (function, PC offset), where its code was written
// and, for inlined code, each call site it was inlined at. Read from the cubin's ELF: .debug_line
// holds a DWARF line program over SASS addresses (nvcc -lineinfo, Triton's default), one sequence
// per function whose start address is relocated against the function's symbol; NVIDIA's extended
// opcode 0x90 gives a row's inlining context (the 1-based row of the call site in the same sequence)
// and the inlined function's name (an offset into .debug_str). CUPTI's cuptiGetSassToSourceCorrelation
// gives the innermost line only; the chain is what lets inlined helpers count on the calling line.
// No CUDA: the parser runs, and is tested, on any machine.
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "kscope/lines.hpp"

namespace kscope::pcsampling {

class CubinLines {
 public:
  // Parses `cubin`; a cubin without a line table (or one kscope cannot read) has no lines, and
  // problem() says why for the latter.
  explicit CubinLines(std::string_view cubin);

  // Innermost first: the line its code was written on (function: the inlined function, or the
  // function itself), then each call site outwards; the last is in `function`'s own code. Empty
  // without line information for that instruction. `function`: the symbol (mangled) name.
  std::vector<SourceLocation> at(const std::string& function, std::uint64_t pc_offset) const;

  // The bytes of `function`'s code its line table covers (0 for a function it does not have).
  std::uint64_t code_size(const std::string& function) const;
  // `function`'s code comes from files other than its own (the file of its first line) without a
  // single call site recorded: code inlined by a compiler that writes no inlining context (LLVM's
  // NVPTX backend before LLVM 22, so Triton built on it), whose lines stay the inlined helper's.
  bool call_sites_missing(const std::string& function) const;
  bool empty() const { return sequences_.empty(); }       // no line information at all
  const std::string& problem() const { return problem_; }  // why the line table could not be read; empty if it could
  std::vector<std::string> functions() const;              // the functions with line information

 private:
  struct Row {
    std::uint64_t address = 0;
    std::uint32_t file = 0;  // index into files_, 1-based as in DWARF
    std::uint32_t line = 0;
    std::uint32_t context = 0;  // 1-based row (in the sequence) of the call site; 0 in the function's own code
    std::string function;       // the inlined function's symbol, when context != 0
  };
  void parse(std::string_view cubin);
  std::string file_name(std::uint32_t index, std::size_t unit) const;

  std::map<std::string, std::vector<Row>> sequences_;  // by function symbol, rows in program order
  std::map<std::string, std::size_t> unit_of_;         // the line-program unit of each function
  std::map<std::string, std::uint64_t> end_of_;        // where each function's sequence ends
  std::vector<std::vector<std::string>> files_;        // per unit: the file table, paths joined with directories
  std::string problem_;
};

// "outer(float, float)" and "_Z5outerff" alike as "outer": a frame's function without its signature.
std::string function_name(const std::string& symbol);

}  // namespace kscope::pcsampling

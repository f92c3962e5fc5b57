#pragma once
// Sampled instructions folded into source lines: what LineResults' tables, listing and comparison
// are made of, and the Python views read.
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "kscope/lines.hpp"

namespace kscope::detail {

// One source line of one kernel in one annotation and config, its instructions' samples added up.
struct SourceLine {
  std::string annotation;
  std::size_t config_index = 0;
  std::string kernel;
  // The line in the function's own code its instructions are attributed to (the outermost call site
  // of inlined code); line 0 for code without line information, which is kept per instruction.
  SourceLocation at;
  std::uint64_t pc_offset = 0;  // code without line information: the instruction's offset
  std::vector<std::pair<std::string, std::uint64_t>> stalls;  // per stall reason, most samples first
  std::uint64_t samples = 0;         // all its stall reasons
  std::uint64_t kernel_samples = 0;  // its kernel's, in the same annotation and config
  std::optional<std::uint64_t> executed;         // SASS metrics, where measured
  std::optional<std::uint64_t> thread_executed;
  std::set<std::string> inlined_from;  // the inlined call chains its samples came through
};

// Each kernel's lines, most sampled first (kernels in annotation, config and name order).
std::vector<SourceLine> source_lines(const SampledCode& code);

// "outer (k.cu:5) > inner (k.cu:2)": the frames inside the attributed line, outermost first.
std::string inlined_from_text(const std::vector<SourceLocation>& source);
std::string frame_text(const SourceLocation& frame);  // "inner (k.cu:2)"; "standard.py:170" without a function
// "k.cu:12", or "fn+0x1a0" for code without line information.
std::string location_text(const SourceLine& line);
double share_pct(std::uint64_t part, std::uint64_t whole);  // NaN of nothing
// Active threads per executed warp instruction, in % of 32; nullopt without the SASS metrics.
std::optional<double> thread_efficiency_pct(const SourceLine& line);

}  // namespace kscope::detail

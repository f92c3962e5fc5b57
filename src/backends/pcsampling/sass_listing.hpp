#pragma once
// SASS text for the raw table: nvdisasm's listing of a cubin, read back per function and offset.
// CUPTI samples program counters but does not disassemble; nvdisasm (the CUDA toolkit's, or the one
// Triton ships) does. The parser needs no CUDA and is tested on any machine.
#include <cstdint>
#include <map>
#include <string>
#include <string_view>

namespace kscope::pcsampling {

// Function symbol -> instruction offset -> its text ("LDG.E R2, desc[UR4][R2.64]"), from the output of
// `nvdisasm -c`: a ".text.<symbol>:" label opens a function, "/*0a40*/  INSTR ... ;" is an instruction.
using SassListing = std::map<std::string, std::map<std::uint64_t, std::string>>;
SassListing parse_sass_listing(std::string_view listing);

}  // namespace kscope::pcsampling

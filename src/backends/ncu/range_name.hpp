#pragma once
// The NVTX ranges that carry kscope's annotations through Nsight Compute. The child process pushes
// one push/pop range per region of every recorded run, in the NVTX domain "kscope", named
//   "<annotation> [kscope:c<config>:r<run>:g<region>]"
// (the annotation first, for the Nsight Compute GUI). ncu profiles only kernels inside such ranges
// (--nvtx-include), and the report import renames each kernel after its innermost range
// (--print-nvtx-rename kernel), so every kernel is attributed by its own coordinates, never by
// its position in the report.
#include <cstddef>
#include <optional>
#include <string>

namespace kscope::ncu {

inline constexpr const char* kNvtxDomain = "kscope";
// Every push/pop range of the kscope domain (the trailing '/' selects push/pop ranges).
inline constexpr const char* kNvtxIncludeFilter = "regex:kscope@.+/";

struct RangeId {
  std::size_t config = 0;  // Config::index()
  std::size_t run = 0;     // recorded run of that config, 0-based (warm-ups are not profiled)
  std::size_t region = 0;  // region index within the run
  bool operator==(const RangeId&) const = default;
};

std::string range_name(const std::string& annotation, const RangeId& id);

// The coordinates in a name ncu reports (a range name, or a kernel renamed after one, with or
// without a "kscope@" domain prefix); the last marker wins. nullopt when there is none.
std::optional<RangeId> parse_range_id(const std::string& name);

}  // namespace kscope::ncu

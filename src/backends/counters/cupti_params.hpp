#pragma once
// CUPTI's profiler parameter structs are versioned by their structSize and want every other
// field zeroed (pPriv = NULL); this makes one that way.
#include <cstddef>

namespace kscope::counters {

template <typename Params>
Params zeroed_params(std::size_t struct_size) {
  Params p{};
  p.structSize = struct_size;
  return p;
}

}  // namespace kscope::counters

// CUPTI_PARAMS(CUpti_Profiler_Host_Initialize_Params) -> the zeroed struct with its structSize.
#define CUPTI_PARAMS(Type) ::kscope::counters::zeroed_params<Type>(Type##_STRUCT_SIZE)

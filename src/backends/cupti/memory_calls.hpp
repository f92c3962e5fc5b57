#pragma once
// The driver entry points that copy or fill memory. While evaluate() observes calls, the cupti
// backend attributes their copies and fills (CUPTI's MEMCPY, MEMCPY2 and MEMSET records) to the
// region open when they were called, by correlation id, as it does kernel launches.
#include <cupti.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "backends/cupti/activity_ledger.hpp"

namespace kscope::cupti {

// Every copy and fill entry point of the driver API (runtime copies and fills sit on top of them),
// synchronous and asynchronous, per-thread default stream variants and the legacy 32-bit ones.
const std::vector<CUpti_CallbackId>& memory_callbacks();

// How many activity records the call `cbid` with these parameters (CUpti_CallbackData's
// functionParams) yields; nullopt when `cbid` is not a copy or a fill.
std::optional<Records> memory_call_records(CUpti_CallbackId cbid, const void* params);

// The stream the copy or fill `cbid` with these parameters is enqueued on: 0 for a synchronous one
// (the legacy or the per-thread default stream); nullopt when `cbid` is not a copy or a fill.
std::optional<CUstream> memory_call_stream(CUpti_CallbackId cbid, const void* params);

// A copy's name in a region's measurement, from its record's copyKind: "[memcpy HtoD]".
std::string copy_name(std::uint8_t copy_kind);
inline constexpr const char* kPeerCopyName = "[memcpy PtoP]";
inline constexpr const char* kFillName = "[memset]";

}  // namespace kscope::cupti

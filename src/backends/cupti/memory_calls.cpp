#include "backends/cupti/memory_calls.hpp"

#include <array>
#include <cstddef>

// cupti.h (through memory_calls.hpp) brings the parameters of each driver call
// (generated_cuda_meta.h, which has no include guard).
namespace kscope::cupti {
namespace {

// The size a call moves, from its parameters; nullptr where it is not known from them.
using SizeOf = std::size_t (*)(const void* params);
// The stream a call is enqueued on, from its parameters: 0 for a synchronous call (the legacy or
// the per-thread default stream).
using StreamOf = CUstream (*)(const void* params);

template <class Params>
std::size_t copied_bytes(const void* params) {
  return static_cast<const Params*>(params)->ByteCount;
}

template <class Params>
std::size_t filled_elements(const void* params) {
  return static_cast<const Params*>(params)->N;
}

template <class Params>
std::size_t filled_area(const void* params) {
  const auto* p = static_cast<const Params*>(params);
  return p->Width * p->Height;
}

template <class Params>
CUstream stream_param(const void* params) {
  if constexpr (requires(const Params& p) { p.hStream; }) return static_cast<const Params*>(params)->hStream;
  else return nullptr;
}
CUstream no_stream(const void*) { return nullptr; }  // a synchronous call without a parameter struct of its own

struct MemoryCall {
  CUpti_CallbackId cbid;
  SizeOf size;
  StreamOf stream;
};

// Copies between a named pair of memories (device, array, host to or from device or array, peer
// devices): a GPU engine carries each out, one record per call of nonzero size. Fills: always of
// device memory, one record each. Copies through unified addresses (cuMemcpy, cuMemcpyAsync) and
// 2D/3D descriptors may be host to host, which the GPU may not carry out; batches may share records
// (CUpti_ActivityMemcpy6::copyCount): their records are taken, whatever their number.
// Each name is pasted where it is given: cuda.h defines the legacy names (cuMemcpyHtoD) as macros
// for their _v2 successors, which an argument passed on unpasted would become.
#define KSCOPE_SIZED(cbid, params, size_of) MemoryCall{cbid, &size_of<params>, &stream_param<params>}
#define KSCOPE_COPY(name) KSCOPE_SIZED(CUPTI_DRIVER_TRACE_CBID_##name, name##_params, copied_bytes)
#define KSCOPE_FILL(name) KSCOPE_SIZED(CUPTI_DRIVER_TRACE_CBID_##name, name##_params, filled_elements)
#define KSCOPE_FILL_2D(name) KSCOPE_SIZED(CUPTI_DRIVER_TRACE_CBID_##name, name##_params, filled_area)
#define KSCOPE_UNSIZED(name) MemoryCall{CUPTI_DRIVER_TRACE_CBID_##name, nullptr, &stream_param<name##_params>}

const std::array kMemoryCalls{
    // Copies between named memories: synchronous, then asynchronous.
    KSCOPE_COPY(cuMemcpyHtoD), KSCOPE_COPY(cuMemcpyHtoD_v2), KSCOPE_COPY(cuMemcpyHtoD_v2_ptds),
    KSCOPE_COPY(cuMemcpyDtoH), KSCOPE_COPY(cuMemcpyDtoH_v2), KSCOPE_COPY(cuMemcpyDtoH_v2_ptds),
    KSCOPE_COPY(cuMemcpyDtoD), KSCOPE_COPY(cuMemcpyDtoD_v2), KSCOPE_COPY(cuMemcpyDtoD_v2_ptds),
    KSCOPE_COPY(cuMemcpyDtoA), KSCOPE_COPY(cuMemcpyDtoA_v2), KSCOPE_COPY(cuMemcpyDtoA_v2_ptds),
    KSCOPE_COPY(cuMemcpyAtoD), KSCOPE_COPY(cuMemcpyAtoD_v2), KSCOPE_COPY(cuMemcpyAtoD_v2_ptds),
    KSCOPE_COPY(cuMemcpyHtoA), KSCOPE_COPY(cuMemcpyHtoA_v2), KSCOPE_COPY(cuMemcpyHtoA_v2_ptds),
    KSCOPE_COPY(cuMemcpyAtoH), KSCOPE_COPY(cuMemcpyAtoH_v2), KSCOPE_COPY(cuMemcpyAtoH_v2_ptds),
    KSCOPE_COPY(cuMemcpyAtoA), KSCOPE_COPY(cuMemcpyAtoA_v2), KSCOPE_COPY(cuMemcpyAtoA_v2_ptds),
    KSCOPE_COPY(cuMemcpyPeer), KSCOPE_COPY(cuMemcpyPeer_ptds),
    KSCOPE_COPY(cuMemcpyHtoDAsync), KSCOPE_COPY(cuMemcpyHtoDAsync_v2), KSCOPE_COPY(cuMemcpyHtoDAsync_v2_ptsz),
    KSCOPE_COPY(cuMemcpyDtoHAsync), KSCOPE_COPY(cuMemcpyDtoHAsync_v2), KSCOPE_COPY(cuMemcpyDtoHAsync_v2_ptsz),
    KSCOPE_COPY(cuMemcpyDtoDAsync), KSCOPE_COPY(cuMemcpyDtoDAsync_v2), KSCOPE_COPY(cuMemcpyDtoDAsync_v2_ptsz),
    KSCOPE_COPY(cuMemcpyHtoAAsync), KSCOPE_COPY(cuMemcpyHtoAAsync_v2), KSCOPE_COPY(cuMemcpyHtoAAsync_v2_ptsz),
    KSCOPE_COPY(cuMemcpyAtoHAsync), KSCOPE_COPY(cuMemcpyAtoHAsync_v2), KSCOPE_COPY(cuMemcpyAtoHAsync_v2_ptsz),
    KSCOPE_COPY(cuMemcpyPeerAsync), KSCOPE_COPY(cuMemcpyPeerAsync_ptsz),
    // Copies through unified addresses or descriptors, and batches.
    KSCOPE_UNSIZED(cuMemcpy), MemoryCall{CUPTI_DRIVER_TRACE_CBID_cuMemcpy_v2, nullptr, &no_stream},
    KSCOPE_UNSIZED(cuMemcpy_ptds),
    KSCOPE_UNSIZED(cuMemcpyAsync), KSCOPE_UNSIZED(cuMemcpyAsync_ptsz),
    KSCOPE_UNSIZED(cuMemcpy2D), KSCOPE_UNSIZED(cuMemcpy2D_v2), KSCOPE_UNSIZED(cuMemcpy2D_v2_ptds),
    KSCOPE_UNSIZED(cuMemcpy2DUnaligned), KSCOPE_UNSIZED(cuMemcpy2DUnaligned_v2),
    KSCOPE_UNSIZED(cuMemcpy2DUnaligned_v2_ptds),
    KSCOPE_UNSIZED(cuMemcpy2DAsync), KSCOPE_UNSIZED(cuMemcpy2DAsync_v2), KSCOPE_UNSIZED(cuMemcpy2DAsync_v2_ptsz),
    KSCOPE_UNSIZED(cuMemcpy3D), KSCOPE_UNSIZED(cuMemcpy3D_v2), KSCOPE_UNSIZED(cuMemcpy3D_v2_ptds),
    KSCOPE_UNSIZED(cuMemcpy3DAsync), KSCOPE_UNSIZED(cuMemcpy3DAsync_v2), KSCOPE_UNSIZED(cuMemcpy3DAsync_v2_ptsz),
    KSCOPE_UNSIZED(cuMemcpy3DPeer), KSCOPE_UNSIZED(cuMemcpy3DPeer_ptds),
    KSCOPE_UNSIZED(cuMemcpy3DPeerAsync), KSCOPE_UNSIZED(cuMemcpy3DPeerAsync_ptsz),
    KSCOPE_UNSIZED(cuMemcpyBatchAsync), KSCOPE_UNSIZED(cuMemcpyBatchAsync_ptsz),
    KSCOPE_UNSIZED(cuMemcpyBatchAsync_v2), KSCOPE_UNSIZED(cuMemcpyBatchAsync_v2_ptsz),
    KSCOPE_UNSIZED(cuMemcpy3DBatchAsync), KSCOPE_UNSIZED(cuMemcpy3DBatchAsync_ptsz),
    KSCOPE_UNSIZED(cuMemcpy3DBatchAsync_v2), KSCOPE_UNSIZED(cuMemcpy3DBatchAsync_v2_ptsz),
    // Fills.
    KSCOPE_FILL(cuMemsetD8), KSCOPE_FILL(cuMemsetD8_v2), KSCOPE_FILL(cuMemsetD8_v2_ptds),
    KSCOPE_FILL(cuMemsetD16), KSCOPE_FILL(cuMemsetD16_v2), KSCOPE_FILL(cuMemsetD16_v2_ptds),
    KSCOPE_FILL(cuMemsetD32), KSCOPE_FILL(cuMemsetD32_v2), KSCOPE_FILL(cuMemsetD32_v2_ptds),
    KSCOPE_FILL(cuMemsetD8Async), KSCOPE_FILL(cuMemsetD8Async_ptsz),
    KSCOPE_FILL(cuMemsetD16Async), KSCOPE_FILL(cuMemsetD16Async_ptsz),
    KSCOPE_FILL(cuMemsetD32Async), KSCOPE_FILL(cuMemsetD32Async_ptsz),
    KSCOPE_FILL_2D(cuMemsetD2D8), KSCOPE_FILL_2D(cuMemsetD2D8_v2), KSCOPE_FILL_2D(cuMemsetD2D8_v2_ptds),
    KSCOPE_FILL_2D(cuMemsetD2D16), KSCOPE_FILL_2D(cuMemsetD2D16_v2), KSCOPE_FILL_2D(cuMemsetD2D16_v2_ptds),
    KSCOPE_FILL_2D(cuMemsetD2D32), KSCOPE_FILL_2D(cuMemsetD2D32_v2), KSCOPE_FILL_2D(cuMemsetD2D32_v2_ptds),
    KSCOPE_FILL_2D(cuMemsetD2D8Async), KSCOPE_FILL_2D(cuMemsetD2D8Async_ptsz),
    KSCOPE_FILL_2D(cuMemsetD2D16Async), KSCOPE_FILL_2D(cuMemsetD2D16Async_ptsz),
    KSCOPE_FILL_2D(cuMemsetD2D32Async), KSCOPE_FILL_2D(cuMemsetD2D32Async_ptsz),
};

#undef KSCOPE_UNSIZED
#undef KSCOPE_FILL_2D
#undef KSCOPE_FILL
#undef KSCOPE_COPY
#undef KSCOPE_SIZED

// kMemoryCalls by callback id, for the callback that every copy and fill passes through.
const std::array<const MemoryCall*, CUPTI_DRIVER_TRACE_CBID_SIZE>& calls_by_id() {
  static const auto table = [] {
    std::array<const MemoryCall*, CUPTI_DRIVER_TRACE_CBID_SIZE> t{};
    for (const MemoryCall& call : kMemoryCalls) t[call.cbid] = &call;
    return t;
  }();
  return table;
}

}  // namespace

const std::vector<CUpti_CallbackId>& memory_callbacks() {
  static const std::vector<CUpti_CallbackId> ids = [] {
    std::vector<CUpti_CallbackId> v;
    for (const MemoryCall& call : kMemoryCalls) v.push_back(call.cbid);
    return v;
  }();
  return ids;
}

std::optional<Records> memory_call_records(CUpti_CallbackId cbid, const void* params) {
  if (cbid >= CUPTI_DRIVER_TRACE_CBID_SIZE) return std::nullopt;
  const MemoryCall* call = calls_by_id()[cbid];
  if (!call) return std::nullopt;
  // Zero bytes may be no GPU work at all: its record, if any, is taken.
  return call->size && params && call->size(params) > 0 ? Records::one : Records::any;
}

std::optional<CUstream> memory_call_stream(CUpti_CallbackId cbid, const void* params) {
  if (cbid >= CUPTI_DRIVER_TRACE_CBID_SIZE || !params) return std::nullopt;
  const MemoryCall* call = calls_by_id()[cbid];
  if (!call) return std::nullopt;
  return call->stream(params);
}

std::string copy_name(std::uint8_t copy_kind) {
  switch (copy_kind) {
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD: return "[memcpy HtoD]";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH: return "[memcpy DtoH]";
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOA: return "[memcpy HtoA]";
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOH: return "[memcpy AtoH]";
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOA: return "[memcpy AtoA]";
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOD: return "[memcpy AtoD]";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOA: return "[memcpy DtoA]";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD: return "[memcpy DtoD]";
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOH: return "[memcpy HtoH]";
    case CUPTI_ACTIVITY_MEMCPY_KIND_PTOP: return kPeerCopyName;
    default: return "[memcpy]";
  }
}

}  // namespace kscope::cupti

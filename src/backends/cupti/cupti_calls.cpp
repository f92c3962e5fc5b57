#include "backends/cupti/cupti_calls.hpp"

#include <cuda_runtime_api.h>

#include "backends/cupti/activity_tracer.hpp"
#include "device/persisting_l2.hpp"
#include "device/stream_marker.hpp"

namespace kscope::cupti {
namespace {

// A caller's stream as evaluate() gives it: a cudaStream_t as an integer, 0 the legacy default
// stream (whatever default stream this library was compiled for).
cudaStream_t stream_of(std::uintptr_t stream) {
  return stream == 0 ? cudaStreamLegacy : reinterpret_cast<cudaStream_t>(stream);
}

}  // namespace

void CuptiCalls::observe_calls() {
  observing_ = true;
  persisting_l2_before_ = device::persisting_l2_limit();
}

void CuptiCalls::call_returned(const RegionContext& region, std::uintptr_t stream) {
  ActivityTracer::instance().call_returned(static_cast<std::int64_t>(region.index), stream,
                                           [&] { device::launch_stream_marker(stream_of(stream)); });
}

std::string CuptiCalls::take_persisting_l2(std::uintptr_t stream) {
  // Reading the state takes four CUDA calls (a few microseconds a measured call); without a call that
  // sets it since the last look, it is as kscope left it.
  if (!ActivityTracer::instance().take_persisting_state_call()) return "";
  return device::take_persisting_l2(stream_of(stream), persisting_l2_before_);
}

}  // namespace kscope::cupti

#pragma once
// Whether a run was measured while the GPU held its clocks down.
#include <cstdint>

#include "kscope/measurement_backend.hpp"

namespace kscope::detail {

// NVML clock-event reasons (nvmlClocksEventReasons).
inline constexpr std::uint64_t kReasonGpuIdle = 0x1;
// Software power cap, hardware slowdown, software/hardware thermal slowdown, power brake.
inline constexpr std::uint64_t kThrottleReasons = 0x4 | 0x8 | 0x20 | 0x40 | 0x80;
// An SM clock below this fraction of the expected one counts as throttled (NVBench uses 0.75 too).
inline constexpr double kThrottleClockFraction = 0.75;

// A run is throttled when a reading around it reports a throttle reason, or reports the GPU busy
// (no GpuIdle reason) at an SM clock below 75% of `expected_sm_mhz`. Readings without reasons
// (no NVML) never count: a low clock may just be an idle GPU.
bool is_throttled(const ClockReading& before, const ClockReading& after, double expected_sm_mhz);

}  // namespace kscope::detail

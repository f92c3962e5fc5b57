#include "core/control/throttle.hpp"

namespace kscope::detail {
namespace {
bool reading_throttled(const ClockReading& r, double expected_sm_mhz) {
  if (!r.event_reasons) return false;
  if (*r.event_reasons & kThrottleReasons) return true;
  const bool busy = !(*r.event_reasons & kReasonGpuIdle);
  return busy && expected_sm_mhz > 0 && r.sm_mhz < kThrottleClockFraction * expected_sm_mhz;
}
}  // namespace

bool is_throttled(const ClockReading& before, const ClockReading& after, double expected_sm_mhz) {
  return reading_throttled(before, expected_sm_mhz) || reading_throttled(after, expected_sm_mhz);
}

}  // namespace kscope::detail

#pragma once
// The roofline of one summary row: from its runs' durations and clocks, the declared work and the
// session's device (kscope/roofline.hpp says what each figure means).
#include <string>
#include <vector>

#include "kscope/results.hpp"
#include "kscope/roofline.hpp"
#include "kscope/work.hpp"

namespace kscope::detail {

// Throws ConfigError unless both thresholds are percentages above 0 and at most 100.
void check_bound_thresholds(const BoundThresholds& thresholds);

// Seconds per unit of a duration metric ("ns", "nsecond", "nanosecond", "us", "ms", "s", ...); NaN
// for a unit that is not a time.
double seconds_per(const std::string& unit);

// Why the session's device has no compute roof for the kind (an architecture missing from the
// table, or a kind it does not have); empty when it has one.
std::string missing_compute_roof(const SessionInfo& session, FlopKind kind);

}  // namespace kscope::detail

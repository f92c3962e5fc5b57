#pragma once
// A duration row's roofline point (its AchievedGBps, DRAMRoofPct, ... columns): each run's rates
// against the roofs at the clocks observed around it, then their means and 95% intervals.
#include <vector>

#include "kscope/results.hpp"
#include "kscope/roofline.hpp"
#include "kscope/work.hpp"

namespace kscope::detail {

// One run of a duration row: its duration, and the clocks observed around it (NaN when unknown).
struct TimedRun {
  double seconds, sm_clock_mhz, memory_clock_mhz;
};

// `runs`: those of a duration row that enter its statistics.
RooflinePoint roofline_point(const Work& work, const std::vector<TimedRun>& runs, const SessionInfo& session,
                             const BoundThresholds& thresholds);

}  // namespace kscope::detail

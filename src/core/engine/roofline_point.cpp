#include "core/engine/roofline_point.hpp"

#include <cmath>

#include "kscope/statistics.hpp"

namespace kscope::detail {

RooflinePoint roofline_point(const Work& work, const std::vector<TimedRun>& runs, const SessionInfo& session,
                             const BoundThresholds& thresholds) {
  std::vector<double> gbps, tflops, dram_pct, compute_pct, dram_roof, compute_roof;
  for (const TimedRun& run : runs) {
    const double seconds = run.seconds;
    if (!(seconds > 0)) continue;  // a failed run (NaN)
    const Roofs roofs = session_roofs(session, run.sm_clock_mhz, run.memory_clock_mhz);
    const double bytes_per_s = work.bytes / seconds, flops_per_s = work.flops / seconds;
    const double compute_peak = roofs.flops_per_s(work.kind);
    gbps.push_back(bytes_per_s / 1e9);
    tflops.push_back(flops_per_s / 1e12);
    dram_roof.push_back(roofs.dram_bytes_per_s / 1e9);
    compute_roof.push_back(compute_peak / 1e12);
    // No work of one kind is 0% of its roof, known or not.
    dram_pct.push_back(work.bytes == 0 ? 0.0 : 100.0 * bytes_per_s / roofs.dram_bytes_per_s);
    compute_pct.push_back(work.flops == 0 ? 0.0 : 100.0 * flops_per_s / compute_peak);
  }
  const auto mean = [](const std::vector<double>& v) { return summarize(v, 100).mean; };
  const auto with_ci = [](const std::vector<double>& v) {
    const SampleStatistics s = summarize(v, 100);
    return MeanWithCI{s.mean, s.ci95_lower, s.ci95_upper};
  };
  RooflinePoint p;
  p.arithmetic_intensity = work.bytes > 0 ? work.flops / work.bytes : INFINITY;
  if (gbps.empty()) return p;
  p.achieved_gbps = mean(gbps);
  p.achieved_tflops = mean(tflops);
  p.dram_roof_gbps = mean(dram_roof);
  p.compute_roof_tflops = mean(compute_roof);
  p.dram_pct = with_ci(dram_pct);
  p.compute_pct = with_ci(compute_pct);
  p.bound = classify_bound(p.dram_pct.mean, p.compute_pct.mean, thresholds);
  return p;
}

}  // namespace kscope::detail

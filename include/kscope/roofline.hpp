#pragma once
// Why is it slow, without counters: the device's roofs, and where a region's measured duration and
// declared work (kscope/work.hpp) put it under them.
//
// The roofs come from the device itself: peak DRAM bandwidth = 2 (double data rate) x memory clock x
// bus width / 8; peak FLOP/s of a kind = SMs x SM clock x FLOPs per SM per cycle, the last from a
// table per architecture (flops_per_sm_per_cycle; src/core/roofline.cpp lists its sources). Every
// duration row of an annotation with declared work gets a RooflinePoint: its achieved bandwidth and
// FLOP/s, each as a percentage of its roof at the clocks observed around each run, the arithmetic
// intensity and a Bound verdict (docs/roofline.md).
#include <cmath>
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "kscope/work.hpp"

namespace kscope {

struct SessionInfo;

// Dense FLOPs per SM per clock cycle of the architecture with this compute capability (major * 10 +
// minor: 90 for sm_90) for the kind; NaN when kscope's table has no rate for it (the kind does not
// exist there, or the architecture is not in the table).
double flops_per_sm_per_cycle(std::size_t compute_capability, FlopKind kind);
// Every kind the table has a column for, in its order: fp64, fp64 tensor, fp32, fp32 tensor (TF32),
// fp16, fp16 tensor, bf16, bf16 tensor, fp8 tensor.
const std::vector<FlopKind>& flop_kinds();
// "Hopper (GH100)" for 90; empty for a compute capability the table does not hold.
std::string architecture_name(std::size_t compute_capability);

// A device's roofs at one SM and memory clock.
struct Roofs {
  std::size_t sm_count = 0;  // streaming multiprocessors
  std::size_t compute_capability = 0;  // major * 10 + minor: 90 for sm_90
  double sm_clock_mhz = NAN;  // the clock the compute roofs are at
  double memory_clock_mhz = NAN;  // the clock the DRAM roof is at
  double dram_bytes_per_s = NAN;  // NaN when the clock or the bus width is unknown

  // SMs x SM clock x flops_per_sm_per_cycle; NaN where any of them is unknown.
  double flops_per_s(FlopKind kind) const;
};

Roofs device_roofs(std::size_t sm_count, std::size_t compute_capability, std::size_t memory_bus_width_bits,
                   double sm_clock_mhz, double memory_clock_mhz);
// The session's device at these clocks; NaN clocks stand for the rated ones.
Roofs session_roofs(const SessionInfo& session, double sm_clock_mhz = NAN, double memory_clock_mhz = NAN);

// What limits a region: the DRAM bandwidth, the arithmetic, or neither (too little parallelism,
// dependent memory accesses, launch-sized work, or traffic the declared bytes do not count).
enum class Bound { memory, compute, latency };
std::string to_string(Bound b);  // "memory", "compute", "latency"

// Settings::bound_thresholds: a region is memory-bound when its DRAM bandwidth reaches memory_pct of
// the roof, compute-bound when its FLOP/s reach compute_pct (the larger percentage decides when both
// do), latency-bound when neither does. 60%, as Nsight Compute's Speed of Light (kscope::bottleneck_rule).
struct BoundThresholds {
  double memory_pct = 60;  // DRAMRoofPct from which a row is memory-bound
  double compute_pct = 60;  // ComputeRoofPct from which a row is compute-bound
};
// nullopt when a percentage is NaN.
std::optional<Bound> classify_bound(double dram_pct, double compute_pct, const BoundThresholds& thresholds);
// The rule above, in words, with these thresholds.
std::string bound_rule(const BoundThresholds& thresholds);

// A mean over a row's runs, with the 95% confidence interval of that mean (NaN for one run).
struct MeanWithCI {
  double mean = NAN;  // over the runs
  double ci95_lower = NAN;  // lower bound of the mean's 95% interval
  double ci95_upper = NAN;  // upper bound of the mean's 95% interval
};

// The roofline of one duration row with declared work: per run, the declared work over the run's
// duration against the roofs at the clocks read around that run (the rated ones where none were
// read), then the mean and its interval over the row's runs. NaN where not applicable.
struct RooflinePoint {
  double arithmetic_intensity = NAN;  // declared FLOPs per declared byte
  double achieved_gbps = NAN;         // declared bytes / duration, 1e9 bytes/s, mean over the runs
  double dram_roof_gbps = NAN;        // mean over the runs of the roof at their memory clock
  MeanWithCI dram_pct;                // achieved / roof, %
  double achieved_tflops = NAN;       // declared FLOPs / duration, 1e12 FLOP/s, mean over the runs
  double compute_roof_tflops = NAN;   // mean over the runs of the roof of the declared kind at their SM clock
  MeanWithCI compute_pct;             // achieved / roof, %
  std::optional<Bound> bound;         // from the two mean percentages
};

}  // namespace kscope

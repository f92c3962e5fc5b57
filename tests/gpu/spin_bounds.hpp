#pragma once
// What a timer may report for spin kernels (kscope_test::launch_spin), derived from how the spin
// and the timers work rather than from past runs, and a GoogleTest check against those bounds.
//
// launch_spin(ns) reads %globaltimer once, then spins until a reading is >= that first one + ns.
// The timer counts nanoseconds but need not update every nanosecond: the first reading may be up
// to one update interval (tick) old, so the spin lasts more than ns - tick; it ends within one loop
// iteration (a register read, tens of ns) of the reading that satisfies it. Every timer then adds
// a fixed part of its own on top: the kernel's launch to first instruction and exit to completion,
// which no spin length changes.
#include <gtest/gtest.h>

#include <cstdio>

namespace kscope_test {

// A bound on the %globaltimer update interval. The PTX ISA promises nanosecond units, not a
// nanosecond update: the coarsest interval reported is 1 us, on GPUs where no profiler has yet
// raised the rate (to 160 ns on a Jetson TX2, for one). 2 us leaves room for an interval a little
// over 1 us. globaltimer_tick_ns() measures the device's: CuptiTiming.SpinKernelOfKnownLength and
// LateAttach check it against this bound.
inline constexpr double kGlobalTimerTickNs = 2000;

// How far a timer's value for one spin may fall below and rise above the spin's nominal length.
struct SpinTimer {
  const char* name;
  double below_ns;  // the spin ending early (one tick), plus the timer's own resolution
  double above_ns;  // the timer's fixed part, plus the spin's last loop iteration
};

// CUPTI's kernel record (start to end of the grid). Its fixed part is what an empty <<<1,32>>>
// kernel measures: 480-640 ns on an H200 (research/cupti-nvml.md, 2.5); the spins' excess over
// their nominal length was 0.43-0.75 us in gpu_check runs. 2 us is ~3x that, for a GPU whose SM
// clock (which the fixed part's cycles follow) is below boost; a launch latency wrongly included
// (the host's 4-6 us) or a neighbour's spin (>= 5 us away in these tests) still falls outside
// (the window is 4 us wide).
// Its 32 ns timestamps are far inside the fixed part, so the lower side is the tick alone.
inline constexpr SpinTimer kCupti{"CUPTI kernel duration", kGlobalTimerTickNs, 2000};

// The profiler's gpu__time_duration.sum (counter backend and ncu): a longer fixed part, 1.2-1.54 us
// per kernel on 10-100 us spins with both tools; bounded at 3 us (2x).
inline constexpr SpinTimer kGpuTimeDuration{"gpu__time_duration.sum", kGlobalTimerTickNs, 3000};

// CUDA events around a launch: the start event completes on an idle GPU before the host has
// launched the kernel, so they add the host's launch latency (4.5 us per launch measured here,
// research/cupti-nvml.md 2.5; events read 6 us high in gpu_check runs), bounded at 20 us for a busy
// host; below, the events' own resolution (about 0.5 us, cudaEventElapsedTime).
inline constexpr SpinTimer kEvents{"CUDA events", kGlobalTimerTickNs + 500, 20000};

// Passes when `measured_ns` is what `timer` may report for `kernels` spins, one after another, of
// `spin_ns` in all (a combined or a range value has one fixed part per kernel).
inline ::testing::AssertionResult spin_measured(double measured_ns, double spin_ns, const SpinTimer& timer = kCupti,
                                                int kernels = 1) {
  const double low = spin_ns - kernels * timer.below_ns;
  const double high = spin_ns + kernels * timer.above_ns;
  if (measured_ns >= low && measured_ns <= high) return ::testing::AssertionSuccess();
  char text[256];
  std::snprintf(text, sizeof text, "%s %.0f ns for %d spin(s) of %.0f ns in all (excess %+.0f ns): outside [%.0f, %.0f]",
                timer.name, measured_ns, kernels, spin_ns, measured_ns - spin_ns, low, high);
  return ::testing::AssertionFailure() << text;
}

}  // namespace kscope_test

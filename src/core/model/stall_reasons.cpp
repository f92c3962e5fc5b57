// The stall reasons PC sampling reports, by Nsight Compute's names, with what each means (Nsight
// Compute's Profiling Guide, "Warp Stall Reasons", in our words). CUPTI names them as counters:
// smsp__pcsamp_warps_issue_stalled_<reason>, and <reason>_not_issued for the subset of samples whose
// warp issued nothing (kscope collects the first: every sample counts once).
#include <string_view>

#include "kscope/lines.hpp"

namespace kscope {

const std::vector<StallReason>& stall_reasons() {
  static const std::vector<StallReason> reasons{
      {"long_scoreboard", "waiting for an L1TEX result: a global, local, texture or surface load the next instruction "
                          "reads (memory latency; fewer or coalesced loads, more warps, or prefetching help)"},
      {"barrier", "waiting at a block-wide barrier (__syncthreads, bar.sync) for the block's other warps: uneven work "
                  "before the barrier, or barriers too frequent for the work between them"},
      {"wait", "a fixed-latency dependency: the next instruction needs the result of an arithmetic instruction just "
               "issued (dependent FMA chains; more independent work per thread hides it)"},
      {"math_pipe_throttle", "the math pipe the instruction needs (FMA, ALU, FP64, tensor) is busy: the kernel "
                             "is limited by that pipe's throughput"},
      {"short_scoreboard", "waiting for an MIO result: shared memory, special functions (MUFU: exp, rsqrt...), "
                           "or other MIO operations (bank conflicts lengthen it)"},
      {"mio_throttle", "the MIO instruction queue (shared memory, special math, dynamic branches) is full"},
      {"lg_throttle", "the local/global memory instruction queue is full: too many memory instructions in flight "
                      "(wider loads, or fewer of them, help)"},
      {"tex_throttle", "the texture (L1TEX) unit's queue is full"},
      {"branch_resolving", "waiting for a branch target to be computed, or the warp's PC to be updated"},
      {"no_instructions", "no instruction was fetched yet: an instruction cache miss, or the first instructions after a "
                         "jump"},
      {"dispatch_stall", "the instruction was selected but the dispatcher could not issue it (a pipeline conflict)"},
      {"drain", "after EXIT, waiting for the warp's memory stores to drain"},
      {"imc_miss", "waiting for an immediate-constant cache miss (constant memory read for the first time)"},
      {"membar", "waiting at a memory barrier (__threadfence, fence instructions)"},
      {"sleeping", "the warp is asleep (__nanosleep) or all its threads are blocked, yielded or exited"},
      {"misc", "a hardware reason not counted by the others"},
      {"gmma", "waiting for warpgroup MMA (wgmma) resources (Hopper)"},
      {"selected", "not a stall: the warp issued an instruction in the sampled cycle"},
      {"not_selected", "eligible, but the scheduler issued another warp's instruction: more warps were ready than "
                       "the scheduler can issue (not a problem in itself)"},
  };
  return reasons;
}

std::string stall_reason_name(const std::string& cupti_name) {
  static constexpr std::string_view prefix = "smsp__pcsamp_warps_issue_stalled_";
  return cupti_name.starts_with(prefix) ? cupti_name.substr(prefix.size()) : cupti_name;
}

}  // namespace kscope

// kscope doctor's PC sampling probe: sampling enabled and configured on device 0's primary context,
// then disabled, as the pcsampling backend's sessions begin. No kernel runs.
#include "backends/counters/driver_api.hpp"
#include "backends/counters/kept_profiler.hpp"
#include "backends/pcsampling/context_sampling.hpp"
#include "doctor/system_probes.hpp"
#include "kscope/lines.hpp"

namespace kscope::doctor {

PcSamplingFacts SystemProbes::pc_sampling(const std::string& skip_reason) {
  if (!skip_reason.empty()) return {false, skip_reason};
  PcSamplingFacts f{true, ""};
  try {
    const CUcontext context = counters::current_context();
    counters::release_kept_profiler();
    const pcsampling::ContextSampling sampling(context, kDefaultSamplingPeriodLog2);
  } catch (const std::exception& e) {
    f.problem = e.what();
  }
  return f;
}

}  // namespace kscope::doctor

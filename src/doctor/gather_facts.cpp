#include "doctor/probes.hpp"
#include "backends/availability.hpp"

namespace kscope::doctor {

DoctorFacts gather_facts(DoctorProbes& probes) {
  DoctorFacts facts;
  facts.cuda_state = probes.cuda_state();
  facts.host = probes.host();
  facts.runtime_cuda_version = probes.runtime_cuda_version();
  facts.driver = probes.driver();
  facts.nvml = probes.nvml(facts.driver.devices);
  facts.cupti = probes.cupti();
  std::string skip = gpu_problem(facts);
  if (skip.empty() && !facts.cupti.problem.empty()) skip = "CUPTI could not be loaded";
  if (const std::string owner = other_cupti_owner(facts.cupti); skip.empty() && !owner.empty())
    skip = "CUPTI is owned by " + owner + " in this process";
  facts.counters = probes.counters(skip);
  // Sampling needs the same permission and a free monitor: where the counters cannot be read, that says why.
  if (skip.empty() && facts.counters.probed && !facts.counters.problem.empty())
    skip = "the hardware counters cannot be read";
  facts.pc_sampling = probes.pc_sampling(skip);
  facts.ncu = probes.ncu();
  return facts;
}

}  // namespace kscope::doctor

// kscope doctor for a kscope built without CUDA: no probe can run, and the report says why.
#include "kscope/doctor.hpp"

namespace kscope {

DoctorReport run_doctor() {
  const std::string why =
      "kscope was built without CUDA (KSCOPE_ENABLE_CUDA=OFF): install the CUDA toolkit (nvcc, CUPTI) and "
      "rebuild kscope with -DKSCOPE_ENABLE_CUDA=ON";
  DoctorFacts facts;
  facts.driver.problem = why;
  facts.nvml.problem = why;
  facts.cupti.problem = why;
  facts.counters.problem = why;
  facts.pc_sampling.problem = why;
  facts.ncu.problem = why;
  return assess(facts);
}

}  // namespace kscope

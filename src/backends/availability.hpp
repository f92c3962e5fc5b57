#pragma once
// Whether each of kscope's backends can run here, from the doctor's facts (kscope/doctor.hpp): the
// verdicts of their rows in the backend registry, and the conditions those rest on, which the
// doctor's probe order, checks and report share. The doctor reaches the backends through the
// registry; this room never includes the doctor's.
#include <string>

#include "kscope/doctor.hpp"

namespace kscope::doctor {

// "13.0" for 13000 (cuDriverGetVersion / cudaRuntimeGetVersion); "unknown" for 0.
std::string cuda_version_text(int version);

// Why no kernel can be measured here, in a few words (no driver, no GPU, driver older than
// kscope's CUDA major version; the driver check has the details); empty when a GPU is usable.
std::string gpu_problem(const DoctorFacts& facts);

// The other tool that owns CUPTI in this process; empty when CUPTI is free or held by kscope itself.
std::string other_cupti_owner(const CuptiFacts& cupti);

// Whether the hardware counters are reserved to administrators, and this process is not root.
bool counters_restricted(const CounterFacts& counters);

// Whether each of kscope's backends can run here, and why not (its row in the backend registry
// names it; the doctor fills in BackendAvailability::backend).
BackendAvailability cupti_availability(const DoctorFacts& facts);
BackendAvailability events_availability(const DoctorFacts& facts);
BackendAvailability counters_availability(const DoctorFacts& facts);
BackendAvailability automatic_availability(const DoctorFacts& facts);
BackendAvailability ncu_availability(const DoctorFacts& facts);
BackendAvailability pcsampling_availability(const DoctorFacts& facts);

}  // namespace kscope::doctor

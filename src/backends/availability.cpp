// Whether each of kscope's backends can run here, from the doctor's facts: the verdicts their rows
// in the backend registry give (src/backends/builtin_backends.cpp), and the conditions they rest on,
// which the doctor's checks share.
#include "backends/availability.hpp"

namespace kscope::doctor {
namespace {

// Why the counter-based backends cannot run, or empty.
std::string counter_problem(const DoctorFacts& f) {
  const CounterFacts& c = f.counters;
  if (c.probed) return c.problem.empty() ? "" : "the counter probe failed: " + c.problem;
  if (counters_restricted(c)) return "hardware counters are restricted to administrators (RmProfilingAdminOnly: 1)";
  return "the counters were not probed: " + c.problem;
}

// Why CUPTI cannot serve a backend here, or empty.
std::string cupti_problem(const DoctorFacts& f) {
  if (const std::string gpu = gpu_problem(f); !gpu.empty()) return gpu;
  if (!f.cupti.problem.empty()) return "CUPTI could not be loaded: " + f.cupti.problem;
  if (const std::string other = other_cupti_owner(f.cupti); !other.empty())
    return "another profiler (" + other + ") owns CUPTI in this process";
  return {};
}

std::string counters_problem(const DoctorFacts& f) {
  const std::string cupti = cupti_problem(f);
  return cupti.empty() ? counter_problem(f) : cupti;
}

BackendAvailability verdict(const std::string& problem) { return {Backend(), problem.empty(), problem}; }

}  // namespace

BackendAvailability cupti_availability(const DoctorFacts& f) { return verdict(cupti_problem(f)); }

BackendAvailability events_availability(const DoctorFacts& f) { return verdict(gpu_problem(f)); }

BackendAvailability counters_availability(const DoctorFacts& f) { return verdict(counters_problem(f)); }

// Available wherever a GPU is: its note says what it falls back to (counters, else cupti, else events).
BackendAvailability automatic_availability(const DoctorFacts& f) {
  const std::string gpu = gpu_problem(f);
  if (!gpu.empty()) return verdict(gpu);
  if (counters_problem(f).empty()) return {Backend(), true, "uses counters"};
  if (cupti_problem(f).empty()) return {Backend(), true, "uses cupti (counters unavailable)"};
  return {Backend(), true, "uses events (CUPTI unavailable)"};
}

BackendAvailability ncu_availability(const DoctorFacts& f) {
  std::string ncu = gpu_problem(f);
  if (ncu.empty() && !f.ncu.problem.empty()) ncu = f.ncu.problem;
  if (ncu.empty() && !f.ncu.rerun_problem.empty())
    ncu = "this process cannot be re-run under ncu: it is " + f.ncu.rerun_problem;
  if (const std::string other = other_cupti_owner(f.cupti); ncu.empty() && !other.empty())
    ncu = "this process already runs under another profiler (" + other + ")";
  if (ncu.empty() && (counters_restricted(f.counters) || (f.counters.probed && !f.counters.problem.empty())))
    ncu = "Nsight Compute needs the hardware counters, which cannot be read here";
  return verdict(ncu);
}

// PC sampling needs what the counters need (CUPTI free, profiling permitted, the monitor free), and
// the sampling probe's own verdict where it ran.
BackendAvailability pcsampling_availability(const DoctorFacts& f) {
  std::string problem = counters_problem(f);
  if (problem.empty() && f.pc_sampling.probed && !f.pc_sampling.problem.empty())
    problem = "the PC sampling probe failed: " + f.pc_sampling.problem;
  return verdict(problem);
}

std::string cuda_version_text(int version) {
  if (version <= 0) return "unknown";
  return std::to_string(version / 1000) + "." + std::to_string(version % 1000 / 10);
}

std::string gpu_problem(const DoctorFacts& f) {
  if (!f.driver.problem.empty()) return "no working NVIDIA driver";
  if (f.driver.no_device || f.driver.devices.empty()) return "no CUDA device is visible";
  if (f.driver.cuda_version > 0 && f.driver.cuda_version / 1000 < f.runtime_cuda_version / 1000)
    return "the driver (CUDA " + cuda_version_text(f.driver.cuda_version) + ") is older than kscope's CUDA runtime (" +
           cuda_version_text(f.runtime_cuda_version) + ")";
  return {};
}

std::string other_cupti_owner(const CuptiFacts& cupti) { return cupti.owner == "kscope" ? "" : cupti.owner; }

bool counters_restricted(const CounterFacts& c) { return c.admin_only == true && !c.root; }

}  // namespace kscope::doctor

#pragma once
// What `kscope doctor` asks the machine, one question per call, so that the verdict logic can be
// tested with fakes (no GPU, CUPTI owned by Nsight Compute, counters restricted, ...). The real
// implementation is SystemProbes (system_probes.hpp).
#include <string>
#include <vector>

#include "kscope/doctor.hpp"

namespace kscope::doctor {

class DoctorProbes {
 public:
  virtual ~DoctorProbes() = default;
  virtual HostFacts host() = 0;
  // Asked first, before anything in the doctor can initialise CUDA.
  virtual CudaStateFacts cuda_state() = 0;
  virtual int runtime_cuda_version() = 0;
  // Initialises CUDA and lists the devices.
  virtual DriverFacts driver() = 0;
  // Fills the NVML fields of `devices` (found by UUID) and gives the driver version.
  virtual NvmlFacts nvml(std::vector<DoctorDevice>& devices) = 0;
  virtual CuptiFacts cupti() = 0;
  // The counter permission; the one-metric probe only when skip_reason is empty (otherwise it is
  // reported as the reason the probe did not run).
  virtual CounterFacts counters(const std::string& skip_reason) = 0;
  // Whether PC sampling may run: enabled and disabled once on device 0, only when skip_reason is empty.
  virtual PcSamplingFacts pc_sampling(const std::string& skip_reason) = 0;
  virtual NcuFacts ncu() = 0;
};

// Asks every probe in the order that keeps the answers true (CUDA state before cuInit; the
// counter probe only where a GPU and a free CUPTI exist).
DoctorFacts gather_facts(DoctorProbes& probes);

}  // namespace kscope::doctor

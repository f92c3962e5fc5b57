#pragma once
// The doctor's probes of this machine and process. The driver, NVML and CUPTI are loaded with
// dlopen; nothing is changed (no Set* call of NVML, CUPTI subscribed and released at once).
#include "doctor/probes.hpp"

namespace kscope::device {
struct NvmlApi;
}

namespace kscope::doctor {

class SystemProbes final : public DoctorProbes {
 public:
  HostFacts host() override;
  CudaStateFacts cuda_state() override;       // driver_probe.cpp
  int runtime_cuda_version() override;        // driver_probe.cpp
  DriverFacts driver() override;              // driver_probe.cpp
  NvmlFacts nvml(std::vector<DoctorDevice>& devices) override;  // nvml_probe.cpp
  CuptiFacts cupti() override;                // cupti_probe.cpp
  CounterFacts counters(const std::string& skip_reason) override;  // cupti_probe.cpp
  PcSamplingFacts pc_sampling(const std::string& skip_reason) override;  // pc_sampling_probe.cpp
  NcuFacts ncu() override;
};

// SystemProbes::nvml with the NVML entry points in `api` (the process's library there; a fake in tests).
NvmlFacts nvml_facts(const device::NvmlApi& api, std::vector<DoctorDevice>& devices);

}  // namespace kscope::doctor

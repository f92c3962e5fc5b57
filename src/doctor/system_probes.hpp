#pragma once
// The doctor's probes of this machine and process. The driver, NVML and CUPTI are loaded with
// dlopen; nothing is changed (no Set* call of NVML, CUPTI subscribed and released at once).
#include "doctor/probes.hpp"

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
  NcuFacts ncu() override;
};

}  // namespace kscope::doctor

#include "doctor/system_probes.hpp"

#include <unistd.h>

#include "backends/ncu/ncu_locator.hpp"
#include "backends/ncu/program_command.hpp"
#include "device/cuda_device.hpp"
#include "kscope/errors.hpp"

namespace kscope {
namespace doctor {

HostFacts SystemProbes::host() { return {device::host_name(), static_cast<unsigned>(geteuid())}; }

NcuFacts SystemProbes::ncu() {
  const ncu::NcuProbe probe = ncu::probe_ncu();
  NcuFacts f{probe.path, probe.version ? probe.version->to_string() : "", probe.problem, ""};
  try {
    f.rerun_problem = ncu::rerun_problem(ncu::current_program());
  } catch (const Error& e) {
    f.rerun_problem = e.what();
  }
  return f;
}

}  // namespace doctor

DoctorReport run_doctor() {
  doctor::SystemProbes probes;
  return assess(doctor::gather_facts(probes));
}

}  // namespace kscope

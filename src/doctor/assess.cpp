// The doctor's verdicts: from the facts to checks (what works, what does not, the fix) and to the
// backends that can therefore run here.
#include <cstdio>
#include <span>

#include "backends/availability.hpp"
#include "core/model/backend_choice.hpp"
#include "kscope/backend_registry.hpp"
#include "kscope/detail/enum_names.hpp"
#include "kscope/doctor.hpp"
#include "kscope/roofline.hpp"

namespace kscope {
namespace {

using doctor::counters_restricted;
using doctor::cuda_version_text;
using doctor::gpu_problem;
using doctor::other_cupti_owner;

using detail::backend_choice;

std::string permission_fix() {
  return "Run as root (sudo); or have an admin put 'options nvidia NVreg_RestrictProfilingToAdminUsers=0' in a file "
         "in /etc/modprobe.d/ and reboot (or reload the nvidia modules); in Docker add --cap-add=SYS_ADMIN, in "
         "Kubernetes SYS_ADMIN in securityContext.capabilities. See https://developer.nvidia.com/ERR_NVGPUCTRPERM. " +
         backend_choice(Backend::cupti) + " and " + backend_choice(Backend::events) + " need no counters";
}

std::string fixed(double value, int decimals) {
  char text[64];
  std::snprintf(text, sizeof text, "%.*f", decimals, value);
  return text;
}

std::string mhz(double value) { return std::isnan(value) ? "unknown" : fixed(value, 0) + " MHz"; }

std::string device_line(const DoctorDevice& d) {
  return "#" + std::to_string(d.ordinal) + " " + d.name + " (" + d.uuid + "), compute capability " +
         std::to_string(d.cc_major) + "." + std::to_string(d.cc_minor) + ", " + std::to_string(d.sm_count) +
         " SMs, L2 " + fixed(static_cast<double>(d.l2_bytes) / (1 << 20), 1) + " MiB, memory " +
         fixed(static_cast<double>(d.memory_bytes) / (1 << 30), 1) + " GiB, rated clocks SM " +
         mhz(d.rated_sm_clock_mhz) + " / memory " + mhz(d.rated_memory_clock_mhz);
}

std::string admin_only_text(const CounterFacts& c) {
  if (!c.admin_only) return "RmProfilingAdminOnly unknown: /proc/driver/nvidia/params unreadable";
  return std::string("RmProfilingAdminOnly: ") + (*c.admin_only ? "1" : "0") + (c.root ? ", root" : ", not root");
}

DoctorCheck driver_check(const DoctorFacts& f) {
  const std::string runtime = cuda_version_text(f.runtime_cuda_version);
  if (!f.driver.problem.empty())
    return {"driver", CheckStatus::error, "NVIDIA driver: " + f.driver.problem, {},
            "Install the NVIDIA driver (it provides libcuda.so.1) and check that nvidia-smi works; in a container, "
            "expose the GPU (docker run --gpus all, or the NVIDIA container toolkit)"};
  const std::string version = f.nvml.driver_version.empty() ? "(version unknown: NVML unavailable)"
                                                            : f.nvml.driver_version;
  const std::string summary = "NVIDIA driver " + version + " for CUDA " + cuda_version_text(f.driver.cuda_version) +
                              "; kscope's CUDA runtime is " + runtime;
  const int driver_major = f.driver.cuda_version / 1000, runtime_major = f.runtime_cuda_version / 1000;
  if (f.driver.cuda_version > 0 && driver_major < runtime_major)
    return {"driver", CheckStatus::error, summary + ": the driver is too old for it", {},
            "Update the NVIDIA driver to a release for CUDA " + runtime +
                " or newer (CUDA 13.0 needs R580 or later), or build kscope with a CUDA toolkit the driver supports"};
  if (f.driver.cuda_version > 0 && f.driver.cuda_version < f.runtime_cuda_version)
    return {"driver", CheckStatus::warning, summary + ": this relies on CUDA's minor-version compatibility", {},
            "If kernels fail to load (PTX JIT), update the NVIDIA driver to one for CUDA " + runtime};
  return {"driver", CheckStatus::ok, summary, {}, ""};
}

DoctorCheck devices_check(const DoctorFacts& f) {
  if (!f.driver.problem.empty()) return {"devices", CheckStatus::skipped, "not listed: no working driver", {}, ""};
  if (f.driver.devices.empty())
    return {"devices", CheckStatus::error, "no CUDA device is visible: this machine has no usable GPU", {},
            "Check nvidia-smi; CUDA_VISIBLE_DEVICES may hide the GPUs; a container needs the GPU exposed "
            "(docker run --gpus all)"};
  DoctorCheck c{"devices", CheckStatus::ok, std::to_string(f.driver.devices.size()) + " CUDA device(s)", {}, ""};
  for (const auto& d : f.driver.devices) c.details.push_back(device_line(d));
  return c;
}

Roofs rated_roofs(const DoctorDevice& d) {
  return device_roofs(static_cast<std::size_t>(d.sm_count), static_cast<std::size_t>(d.cc_major * 10 + d.cc_minor),
                      static_cast<std::size_t>(d.memory_bus_width_bits), d.rated_sm_clock_mhz, d.rated_memory_clock_mhz);
}

// "#0 DRAM 4917 GB/s (...); Hopper (GH100), 132 SMs at 1980 MHz: fp64 33.8, ... TFLOP/s"
std::string roofs_line(const DoctorDevice& d) {
  const Roofs r = rated_roofs(d);
  std::string line = "#" + std::to_string(d.ordinal) + " DRAM " +
                     (std::isnan(r.dram_bytes_per_s) ? std::string("unknown")
                                                     : fixed(r.dram_bytes_per_s / 1e9, 0) + " GB/s (2 x " +
                                                           mhz(d.rated_memory_clock_mhz) + " x " +
                                                           std::to_string(d.memory_bus_width_bits) + "-bit bus)");
  const std::string name = architecture_name(r.compute_capability);
  if (name.empty())
    return line + "; FLOP/s unknown: compute capability " + std::to_string(d.cc_major) + "." +
           std::to_string(d.cc_minor) + " is not in kscope's table";
  line += "; " + name + ", " + std::to_string(d.sm_count) + " SMs x " + mhz(d.rated_sm_clock_mhz) + ":";
  std::string rates;
  for (const FlopKind& k : flop_kinds())
    if (const double v = r.flops_per_s(k); !std::isnan(v))
      rates += (rates.empty() ? " " : ", ") + to_string(k) + " " + fixed(v / 1e12, v < 1e15 ? 1 : 0);
  return line + rates + " TFLOP/s";
}

DoctorCheck roofs_check(const DoctorFacts& f) {
  if (f.driver.devices.empty()) return {"roofs", CheckStatus::skipped, "not computed: no device", {}, ""};
  DoctorCheck c{"roofs", CheckStatus::ok,
                "peak DRAM bandwidth and FLOP/s at the rated clocks: the roofs of the work= columns (docs/roofline.md \"Why is "
                "it slow, without counters\")",
                {}, ""};
  for (const auto& d : f.driver.devices) {
    c.details.push_back(roofs_line(d));
    if (architecture_name(static_cast<std::size_t>(d.cc_major * 10 + d.cc_minor)).empty()) {
      c.status = CheckStatus::warning;
      c.fix = "Rows with declared work get their DRAM roof and percentage, but no compute roof or Bound, on an "
              "architecture kscope's table lacks";
    }
  }
  return c;
}

DoctorCheck cuda_init_check(const DoctorFacts& f) {
  DoctorCheck c{"cuda_init", CheckStatus::ok, "", {}, ""};
  switch (f.cuda_state.state) {
    case CudaInitState::driver_not_loaded:
      c.summary = "CUDA was not initialised in this process before the doctor ran (libcuda was not loaded)";
      break;
    case CudaInitState::not_initialized:
      c.summary = "CUDA was not initialised in this process before the doctor ran (libcuda loaded, no cuInit)";
      break;
    case CudaInitState::initialized: {
      c.summary = "CUDA was already initialised in this process before the doctor ran";
      if (f.cuda_state.context_current) c.details.push_back("a CUDA context was current on the calling thread");
      for (const auto& d : f.driver.devices)
        if (d.primary_context_active)
          c.details.push_back("the primary context of device #" + std::to_string(d.ordinal) + " was active");
      c.details.push_back("kscope's backends work either way (CUPTI attaches late; " + backend_choice(Backend::ncu) +
                          " re-runs the program). Only Nsight Compute's in-process injection (ncu 2026.2.1+, not used by "
                          "kscope) needs CUDA uninitialised");
      break;
    }
  }
  if (f.driver.problem.empty()) c.details.push_back("the doctor then initialised CUDA itself (cuInit) to list the devices");
  return c;
}

DoctorCheck nvml_check(const DoctorFacts& f) {
  if (!f.nvml.problem.empty())
    return {"nvml", CheckStatus::warning, "NVML unavailable: " + f.nvml.problem, {},
            "NVML (libnvidia-ml.so.1) comes with the NVIDIA driver. Without it the clock columns read NaN, the "
            "thermal guard cannot pause, clock_control=base cannot lock the clocks, and the energy metrics cannot be "
            "measured"};
  DoctorCheck c{"nvml", CheckStatus::ok, "NVML works (driver " + f.nvml.driver_version + ")", {}, ""};
  for (const auto& d : f.driver.devices) {
    if (d.nvml_problem.empty()) continue;
    c.status = CheckStatus::warning;
    c.details.push_back("device #" + std::to_string(d.ordinal) + ": " + d.nvml_problem);
    c.fix = "Devices NVML cannot find have no clock telemetry (NaN clock columns, no thermal guard)";
  }
  return c;
}

DoctorCheck clock_lock_check(const DoctorFacts& f) {
  if (!f.nvml.problem.empty() || f.driver.devices.empty())
    return {"clock_lock", CheckStatus::skipped, "not checked: NVML or the devices are unavailable", {}, ""};
  std::string restriction;
  for (const auto& d : f.driver.devices)
    if (d.clocks_restricted_to_root)
      restriction = *d.clocks_restricted_to_root ? "; application clocks are restricted to root"
                                                 : "; application clocks are not restricted";
  if (f.counters.root)
    return {"clock_lock", CheckStatus::ok,
            "clock_control=base may lock the clocks: this process runs as root" + restriction +
                " (checked without changing any clock)", {}, ""};
  return {"clock_lock", CheckStatus::warning,
          "clock_control=base cannot lock the clocks: NVML's locked-clock calls need root" + restriction +
              " (checked without changing any clock)", {},
          "Run as root to use clock_control=base, or keep clock_control=none (the default: boost allowed)"};
}

DoctorCheck energy_check(const DoctorFacts& f) {
  if (!f.nvml.problem.empty() || f.driver.devices.empty())
    return {"energy", CheckStatus::skipped, "not checked: NVML or the devices are unavailable", {}, ""};
  DoctorCheck c{"energy", CheckStatus::ok, "", {}, ""};
  std::size_t readable = 0;
  for (const auto& d : f.driver.devices) {
    if (d.energy_counter_readable == true) {
      ++readable;
      continue;
    }
    c.details.push_back("device #" + std::to_string(d.ordinal) + ": " +
                        (d.energy_counter_readable ? d.energy_counter_problem : "not read: NVML did not find it"));
  }
  const std::string counter = "the GPU's energy counter (nvmlDeviceGetTotalEnergyConsumption, read once)";
  if (readable == f.driver.devices.size()) {
    c.summary = counter + " is readable: the energy metrics (nvml__*) can be measured";
    return c;
  }
  c.status = CheckStatus::warning;
  c.summary = counter + " is readable on " + std::to_string(readable) + " of " +
              std::to_string(f.driver.devices.size()) + " device(s)";
  c.fix = "The energy metrics (nvml__energy_per_run, nvml__average_power, nvml__energy_above_idle) cannot be measured "
          "on the devices listed; durations and counters are not affected";
  return c;
}

DoctorCheck cupti_check(const DoctorFacts& f) {
  if (!f.cupti.problem.empty())
    return {"cupti", CheckStatus::error, "CUPTI: " + f.cupti.problem, {},
            "CUPTI ships with the CUDA toolkit (libcupti.so in <cuda>/lib64 or <cuda>/extras/CUPTI/lib64): add "
            "that directory to LD_LIBRARY_PATH"};
  return {"cupti", CheckStatus::ok, "CUPTI API version " + std::to_string(f.cupti.version) + " (" + f.cupti.path + ")",
          {}, ""};
}

DoctorCheck cupti_owner_check(const DoctorFacts& f) {
  if (!f.cupti.problem.empty()) return {"cupti_owner", CheckStatus::skipped, "not checked: no CUPTI", {}, ""};
  // Without a GPU, CUPTI cannot subscribe at all (CUPTI_ERROR_UNKNOWN): nothing to say.
  if (const std::string gpu = gpu_problem(f); !gpu.empty() && f.cupti.owner.empty())
    return {"cupti_owner", CheckStatus::skipped, "not checked: " + gpu, {}, ""};
  if (const std::string other = other_cupti_owner(f.cupti); !other.empty())
    return {"cupti_owner", CheckStatus::error,
            "another profiler owns CUPTI in this process: " + other +
                " (CUPTI serves one client per process, so " + backend_choice(Backend::cupti) + " and " +
                backend_choice(Backend::counters) + " cannot run)",
            {},
            "Run without that tool (ncu, nsys, compute-sanitizer, torch.profiler, Proton), or use " +
                backend_choice(Backend::events) + ", which needs no CUPTI"};
  if (!f.cupti.owner.empty())
    return {"cupti_owner", CheckStatus::ok, "CUPTI is held by kscope itself (a kscope backend ran in this process)",
            {}, ""};
  if (!f.cupti.subscribe_problem.empty())
    return {"cupti_owner", CheckStatus::warning, "could not check: " + f.cupti.subscribe_problem, {}, ""};
  return {"cupti_owner", CheckStatus::ok, "CUPTI is free: no other profiler is attached to this process", {}, ""};
}

DoctorCheck counters_check(const DoctorFacts& f) {
  const CounterFacts& c = f.counters;
  if (c.probed && c.problem.empty())
    return {"counters", CheckStatus::ok,
            "hardware counters are readable: a one-metric range-profiler session was enabled on device #0 (" +
                admin_only_text(c) + ")", {}, ""};
  if (c.probed)
    return {"counters", CheckStatus::error, "hardware counters cannot be read on device #0 (" + admin_only_text(c) + ")",
            {c.problem}, counters_restricted(c) ? permission_fix() : ""};
  if (counters_restricted(c))
    return {"counters", CheckStatus::error,
            "hardware counters are restricted to administrators (" + admin_only_text(c) + "); not probed: " + c.problem,
            {}, permission_fix()};
  return {"counters", CheckStatus::skipped, "not probed: " + c.problem + " (" + admin_only_text(c) + ")", {}, ""};
}

DoctorCheck pc_sampling_check(const DoctorFacts& f) {
  const PcSamplingFacts& p = f.pc_sampling;
  if (p.probed && p.problem.empty())
    return {"pc_sampling", CheckStatus::ok,
            "program counters can be sampled: PC sampling was enabled on device #0 (kscope.analyze.lines)", {}, ""};
  if (p.probed)
    return {"pc_sampling", CheckStatus::error, "program counters cannot be sampled on device #0", {p.problem},
            counters_restricted(f.counters) || p.problem.find("PRIVILEGES") != std::string::npos ? permission_fix()
                                                                                                 : ""};
  return {"pc_sampling", CheckStatus::skipped, "not probed: " + p.problem, {}, ""};
}

DoctorCheck ncu_check(const DoctorFacts& f) {
  if (!f.ncu.problem.empty()) return {"ncu", CheckStatus::warning, backend_choice(Backend::ncu) + " unavailable", {f.ncu.problem}, ""};
  DoctorCheck c{"ncu", CheckStatus::ok, "Nsight Compute CLI " + f.ncu.version + " (" + f.ncu.path + ")", {}, ""};
  if (!f.ncu.rerun_problem.empty()) {
    c.status = CheckStatus::warning;
    c.details.push_back("this process cannot be re-run under ncu: it is " + f.ncu.rerun_problem);
    c.fix = "Run the profiling code as a script (python3 script.py), or use " + backend_choice(Backend::counters) +
            " in this process";
  }
  return c;
}

}  // namespace

// The doctor's enumerations on the name table (kscope/detail/enum_names.hpp), found by their namespace.
std::span<const detail::EnumName<CudaInitState>> enum_names(CudaInitState) {
  using S = CudaInitState;
  static constexpr detail::EnumName<S> names[] = {
      {S::driver_not_loaded, "driver_not_loaded"}, {S::not_initialized, "not_initialized"}, {S::initialized, "initialized"}};
  return names;
}

std::span<const detail::EnumName<CheckStatus>> enum_names(CheckStatus) {
  using S = CheckStatus;
  static constexpr detail::EnumName<S> names[] = {
      {S::ok, "ok"}, {S::warning, "warning"}, {S::error, "error"}, {S::skipped, "skipped"}};
  return names;
}

std::string to_string(CudaInitState state) { return detail::enum_name(state); }

std::string to_string(CheckStatus status) { return detail::enum_name(status); }

int DoctorReport::exit_code() const {
  if (!gpu_problem(facts).empty()) return 2;
  for (const auto& b : backends)
    if (!b.available) return 1;
  return 0;
}

DoctorReport assess(DoctorFacts facts) {
  DoctorReport report;
  report.checks = {driver_check(facts),  devices_check(facts),     roofs_check(facts), cuda_init_check(facts),
                   nvml_check(facts),    clock_lock_check(facts),  energy_check(facts), cupti_check(facts),
                   cupti_owner_check(facts), counters_check(facts), pc_sampling_check(facts), ncu_check(facts)};
  for (const Backend b : registered_backends())
    if (const auto& assess_backend = definition(b).assess) {
      report.backends.push_back(assess_backend(facts));
      report.backends.back().backend = b;
    }
  report.facts = std::move(facts);
  return report;
}

}  // namespace kscope

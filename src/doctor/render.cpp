// The doctor's report as text for a person and as JSON for tools (and Python's kscope.doctor()).
#include <nlohmann/json.hpp>

#include "backends/availability.hpp"
#include "core/model/backend_choice.hpp"
#include "kscope/doctor.hpp"
#include "kscope/roofline.hpp"

namespace kscope {
namespace {

using nlohmann::ordered_json;

std::string verdict(const DoctorReport& report) {
  switch (report.exit_code()) {
    case 0: return "every backend works here";
    case 1: return "some backends are unavailable here (each says why)";
    default: return "nothing can measure here: no usable GPU (" + doctor::gpu_problem(report.facts) + ")";
  }
}

std::string label(CheckStatus status) {
  switch (status) {
    case CheckStatus::ok: return "[ ok ]";
    case CheckStatus::warning: return "[warn]";
    case CheckStatus::error: return "[FAIL]";
    case CheckStatus::skipped: return "[skip]";
  }
  return "[ ?? ]";
}

std::string padded(std::string text, std::size_t width) {
  if (text.size() < width) text.resize(width, ' ');
  return text;
}

ordered_json nullable(double v) { return std::isnan(v) ? ordered_json() : ordered_json(v); }

template <typename T>
ordered_json nullable(const std::optional<T>& v) {
  return v ? ordered_json(*v) : ordered_json();
}

// The device's roofs at its rated clocks: the architecture, DRAM GB/s and TFLOP/s per kind it has.
ordered_json roofs_json(const DoctorDevice& d) {
  const std::size_t cc = static_cast<std::size_t>(d.cc_major * 10 + d.cc_minor);
  const Roofs r = device_roofs(static_cast<std::size_t>(d.sm_count), cc, static_cast<std::size_t>(d.memory_bus_width_bits),
                               d.rated_sm_clock_mhz, d.rated_memory_clock_mhz);
  ordered_json tflops = ordered_json::object();
  for (const FlopKind& k : flop_kinds())
    if (const double v = r.flops_per_s(k); !std::isnan(v)) tflops[to_string(k)] = v / 1e12;
  return {{"architecture", architecture_name(cc)}, {"dram_gbps", nullable(r.dram_bytes_per_s / 1e9)}, {"tflops", tflops}};
}

ordered_json facts_json(const DoctorFacts& f) {
  ordered_json devices = ordered_json::array();
  for (const auto& d : f.driver.devices) {
    devices.push_back({{"ordinal", d.ordinal},
                       {"name", d.name},
                       {"uuid", d.uuid},
                       {"compute_capability", std::to_string(d.cc_major) + "." + std::to_string(d.cc_minor)},
                       {"sm_count", d.sm_count},
                       {"l2_bytes", d.l2_bytes},
                       {"memory_bytes", d.memory_bytes},
                       {"rated_sm_clock_mhz", nullable(d.rated_sm_clock_mhz)},
                       {"rated_memory_clock_mhz", nullable(d.rated_memory_clock_mhz)},
                       {"memory_bus_width_bits", d.memory_bus_width_bits},
                       {"roofs", roofs_json(d)},
                       {"primary_context_active", d.primary_context_active},
                       {"nvml_problem", d.nvml_problem},
                       {"clocks_restricted_to_root", nullable(d.clocks_restricted_to_root)},
                       {"energy_counter_readable", nullable(d.energy_counter_readable)},
                       {"energy_counter_problem", d.energy_counter_problem}});
  }
  return {{"host", {{"name", f.host.name}, {"euid", f.host.euid}}},
          {"cuda_state", {{"state", to_string(f.cuda_state.state)}, {"context_current", f.cuda_state.context_current}}},
          {"runtime_cuda_version", doctor::cuda_version_text(f.runtime_cuda_version)},
          {"driver",
           {{"problem", f.driver.problem},
            {"no_device", f.driver.no_device},
            {"cuda_version", doctor::cuda_version_text(f.driver.cuda_version)},
            {"version", f.nvml.driver_version}}},
          {"devices", std::move(devices)},
          {"nvml", {{"problem", f.nvml.problem}}},
          {"cupti",
           {{"problem", f.cupti.problem},
            {"path", f.cupti.path},
            {"version", f.cupti.version},
            {"owner", f.cupti.owner},
            {"subscribe_problem", f.cupti.subscribe_problem}}},
          {"counters",
           {{"admin_only", nullable(f.counters.admin_only)},
            {"root", f.counters.root},
            {"probed", f.counters.probed},
            {"problem", f.counters.problem}}},
          {"pc_sampling", {{"probed", f.pc_sampling.probed}, {"problem", f.pc_sampling.problem}}},
          {"ncu",
           {{"path", f.ncu.path},
            {"version", f.ncu.version},
            {"problem", f.ncu.problem},
            {"rerun_problem", f.ncu.rerun_problem}}}};
}

}  // namespace

std::string to_text(const DoctorReport& report) {
  std::string out = "kscope doctor: what works on this machine, and why\n\n";
  for (const auto& c : report.checks) {
    out += "  " + label(c.status) + " " + padded(c.id, 13) + c.summary + "\n";
    for (const auto& d : c.details) out += std::string(22, ' ') + d + "\n";
    if (!c.fix.empty()) out += std::string(22, ' ') + "fix: " + c.fix + "\n";
  }
  out += "\nBackends\n";
  for (const auto& b : report.backends) {
    out += "  " + padded(detail::backend_label(b.backend), 11) + (b.available ? "available" : "UNAVAILABLE");
    if (!b.reason.empty()) out += (b.available ? " (" : ": ") + b.reason + (b.available ? ")" : "");
    out += "\n";
  }
  const int code = report.exit_code();
  out += "\nVerdict: " + verdict(report) + " (exit code " + std::to_string(code) + ")\n";
  return out;
}

std::string to_json(const DoctorReport& report) {
  ordered_json checks = ordered_json::array();
  for (const auto& c : report.checks)
    checks.push_back(
        {{"id", c.id}, {"status", to_string(c.status)}, {"summary", c.summary}, {"details", c.details}, {"fix", c.fix}});
  ordered_json backends = ordered_json::array();
  for (const auto& b : report.backends)
    backends.push_back({{"backend", to_string(b.backend)}, {"available", b.available}, {"reason", b.reason}});
  const int code = report.exit_code();
  const ordered_json doc{{"exit_code", code},
                         {"verdict", verdict(report)},
                         {"checks", std::move(checks)},
                         {"backends", std::move(backends)},
                         {"facts", facts_json(report.facts)}};
  return doc.dump(2) + "\n";
}

}  // namespace kscope

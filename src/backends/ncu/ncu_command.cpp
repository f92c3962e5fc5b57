#include "backends/ncu/ncu_command.hpp"

#include "backends/ncu/range_name.hpp"
#include "kscope/backend_registry.hpp"

namespace kscope::ncu {

std::vector<std::string> requested_metrics(const Settings& settings) {
  if (settings.metrics.empty()) return default_metrics(Backend::ncu);
  return settings.metrics;
}

std::vector<std::string> profile_command(const std::string& ncu, const Settings& settings, const std::string& report_stem,
                                         const std::string& log_path, const std::vector<std::string>& program) {
  std::string metrics;
  for (const auto& m : requested_metrics(settings)) metrics += (metrics.empty() ? "" : ",") + m;
  std::vector<std::string> cmd{ncu,
                               "--nvtx",
                               "--nvtx-include",
                               kNvtxIncludeFilter,
                               "--replay-mode",
                               to_string(settings.replay_mode),
                               "--cache-control",
                               to_string(settings.cache_control),
                               "--clock-control",
                               to_string(settings.clock_control),
                               "--metrics",
                               metrics,
                               "--log-file",
                               log_path,
                               "--force-overwrite",
                               "--export",
                               report_stem};
  // Sections go into the report for its GUI; ncu names an unknown one itself and exits non-zero.
  for (const auto& section : settings.ncu_sections) cmd.insert(cmd.end(), {"--section", section});
  cmd.insert(cmd.end(), program.begin(), program.end());
  return cmd;
}

std::vector<std::string> import_command(const std::string& ncu, const std::string& report, bool rename_by_nvtx) {
  // Mangled names, demangled by kscope as the other backends do: ncu's own demangled form drops
  // namespaces ("spin_kernel(unsigned long)" for kscope_test::spin_kernel), seen with ncu 2025.3.1.
  std::vector<std::string> cmd{ncu,       "--import", report, "--csv", "--page", "raw", "--print-units", "base",
                               "--print-kernel-base", "mangled"};
  if (rename_by_nvtx) cmd.insert(cmd.end(), {"--print-nvtx-rename", "kernel"});
  return cmd;
}

}  // namespace kscope::ncu

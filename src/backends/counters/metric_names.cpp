#include "backends/counters/metric_names.hpp"

#include <algorithm>

#include "backends/counters/launch_metrics.hpp"
#include "core/backend_choice.hpp"
#include "core/caller.hpp"
#include "core/suggest.hpp"

namespace kscope::counters {

MetricName split_metric_name(const std::string& name) {
  const std::size_t family = name.find("__");
  const std::size_t dot = name.find('.', family == std::string::npos ? 0 : family);
  if (dot == std::string::npos) return {name, ""};
  return {name.substr(0, dot), name.substr(dot)};
}

std::string ncu_only_explanation(const std::string& name) {
  struct Family {
    const char* prefix;
    const char* what;
  };
  // Listed under ncu --query-metrics-collection launch/device/numa/nvlink/profiling: ncu fills
  // them without a counter pass, and CUPTI's metric database does not contain them.
  static const Family families[] = {
      {"launch__", "a launch attribute (grid, block, registers, occupancy) that Nsight Compute computes from the "
                   "launch parameters"},
      {"device__attribute_", "a device attribute that Nsight Compute reads with cuDeviceGetAttribute"},
      {"profiler__", "a statistic of Nsight Compute's own profiling run"},
      {"numa__", "a NUMA topology attribute that Nsight Compute reads from the system"},
      {"nvlink__", "an NVLink topology attribute that Nsight Compute reads from the driver"},
  };
  for (const auto& f : families) {
    if (name.rfind(f.prefix, 0) == 0) {
      const bool launch = std::string(f.prefix) == "launch__";
      return "'" + name + "' is " + f.what + ", not a hardware counter: the CUPTI range profiler cannot collect it" +
             (launch ? " (of the launch attributes, the counters backend computes " + launch_metric_names() + ")" : "") +
             ". Use " + detail::backend_choice(Backend::ncu) + " for it, or remove it from " + detail::option("metrics") +
             " and take it from your own launch code or cudaDeviceGetAttribute";
    }
  }
  return {};
}

std::vector<std::string> suggest_metric_names(
    const std::string& wanted, const std::vector<std::string>& bases,
    const std::function<std::vector<std::string>(const std::string&)>& suffixes_of, std::size_t limit) {
  const MetricName parts = split_metric_name(wanted);
  const bool base_known = std::find(bases.begin(), bases.end(), parts.base) != bases.end();
  // A known base keeps its name and only the suffix is fuzzy; otherwise the closest bases each
  // contribute their suffix closest to the one typed.
  const std::vector<std::string> candidates =
      base_known ? std::vector<std::string>{parts.base} : detail::closest_names(parts.base, bases, limit);
  std::vector<std::string> out;
  for (const auto& base : candidates) {
    const std::vector<std::string> suffixes = suffixes_of(base);
    if (suffixes.empty()) continue;
    for (const auto& s : detail::closest_names(parts.suffix, suffixes, base_known ? limit : 1)) {
      if (out.size() < limit) out.push_back(base + s);
    }
  }
  return out;
}

}  // namespace kscope::counters

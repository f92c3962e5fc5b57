#include "backends/counters/metric_names.hpp"

#include <algorithm>
#include <optional>
#include <string_view>
#include <vector>

#include "backends/counters/launch_metrics.hpp"
#include "core/model/backend_choice.hpp"
#include "core/model/caller_language.hpp"
#include "core/model/suggest.hpp"

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

namespace {

// CUPTI's dimensional units (NVPW_DimUnitName, singular) and how Nsight Compute prints them: the
// unit of the hardware domain goes ("gpc_cycle" and "dram_cycle" are both "cycle"), instructions
// are "inst", CTAs "block", durations "ns".
struct UnitName {
  const char* cupti;
  const char* ncu;
};
constexpr UnitName kUnitNames[] = {
    {"nanosecond", "ns"},     {"percent", "%"},           {"instruction", "inst"},      {"cta", "block"},
    {"cga", "cluster"},       {"kilobyte", "Kbyte"},      {"l1tex_wavefront", "wavefront"},
    {"l1tex_line", "line"},   {"l1tex_request", "request"}, {"l1tex_tag", "tag"},       {"l2_request", "request"},
    {"l2_sector", "sector"},  {"L2_tag", "tag"},          {"l2_tag", "tag"},            {"lrc_req", "request"},
    {"lrc_request", "request"}, {"lrc_sector", "sector"}, {"gcc_request", "request"},   {"idc_request", "request"},
    {"pcie_request", "request"}, {"sysl2_request", "request"}, {"sysl2_sector", "sector"}, {"sysl2_tag", "tag"},
    {"syslrc_request", "request"}, {"syslrc_sector", "sector"}, {"branch_target", "branches"}, {"fe_op", "ops"},
    // clock domains
    {"gpc_cycle", "cycle"},   {"sys_cycle", "cycle"},     {"fbp_cycle", "cycle"},       {"dram_cycle", "cycle"},
    {"ctc_cycle", "cycle"},   {"mcc_cycle", "cycle"},     {"nvlrx_cycle", "cycle"},     {"nvltx_cycle", "cycle"},
    {"pcie_cycle", "cycle"},  {"ofa_cycle", "cycle"},     {"vic_cycle", "cycle"},       {"nvdec_cycle", "cycle"},
    {"nvenc_cycle", "cycle"},
    // the same in both (some then spelt otherwise as a whole: kNcuSpellings)
    {"byte", "byte"},         {"second", "second"},       {"warp", "warp"},             {"thread", "thread"},
    {"register", "register"}, {"math_op", "math_op"},     {"l1data_bank_access", "l1data_bank_access"},
    {"l1data_bank_conflict", "l1data_bank_conflict"},
};

// One side of a unit ("gpc_cyclewarp") as Nsight Compute's factors; nullopt when a part is not in
// the table.
std::optional<std::vector<std::string>> ncu_factors(std::string_view side) {
  std::vector<std::string> out;
  while (!side.empty()) {
    const UnitName* match = nullptr;  // the longest name the text starts with
    for (const auto& u : kUnitNames) {
      const std::string_view name = u.cupti;
      if (side.substr(0, name.size()) == name && (!match || name.size() > std::string_view(match->cupti).size()))
        match = &u;
    }
    if (!match) return std::nullopt;
    out.emplace_back(match->ncu);
    side.remove_prefix(std::string_view(match->cupti).size());
  }
  return out;
}

std::string joined(const std::vector<std::string>& factors) {
  std::string out;
  for (const auto& f : factors) out += (out.empty() ? "" : "*") + f;
  return out;
}

// Whole units that Nsight Compute 2025.3 prints otherwise, as its `--print-units base` export
// showed them for every unit of the GH100's metrics (scripts/nsight_compat_check.sh, part a): no
// unit for clusters, math ops and request products, dimensionless tags, wavefronts and L1 bank
// accesses, the sector of a per-request ratio.
struct UnitSpelling {
  const char* factors;
  const char* ncu;
};
constexpr UnitSpelling kNcuSpellings[] = {
    {"tag", ""},
    {"tag/second", "1/s"},
    {"wavefront", ""},
    {"wavefront/second", "1/s"},
    {"l1data_bank_access", ""},
    {"l1data_bank_access/second", "1/s"},
    {"l1data_bank_conflict", ""},
    {"l1data_bank_conflict/second", "1/s"},
    {"cluster", ""},
    {"cluster/second", ""},
    {"math_op", ""},
    {"math_op/second", ""},
    {"request*sector/request", ""},
    {"request*sector/request*second", ""},
    {"sector/request", "sector"},
    {"byte/wavefront", "byte"},
};

}  // namespace

std::string ncu_unit(const std::string& cupti_unit) {
  const std::size_t slash = cupti_unit.find('/');
  const std::string_view unit = cupti_unit;
  auto top = ncu_factors(unit.substr(0, slash));
  if (!top) return cupti_unit;
  // A product with cycles (warps active, summed over the cycles) is printed without them.
  if (top->size() > 1) std::erase(*top, "cycle");
  std::optional<std::vector<std::string>> bottom;
  if (slash != std::string::npos && !(bottom = ncu_factors(unit.substr(slash + 1)))) return cupti_unit;
  const std::string numerator = joined(*top);
  const std::string whole = numerator + (bottom ? "/" + joined(*bottom) : "");
  for (const auto& u : kNcuSpellings)
    if (whole == u.factors) return u.ncu;
  // A rate is per "s", and cycles per second are "hz".
  if (bottom && *bottom == std::vector<std::string>{"second"}) return numerator == "cycle" ? "hz" : numerator + "/s";
  return whole;
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

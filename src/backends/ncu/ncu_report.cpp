#include "backends/ncu/ncu_report.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>

#include "core/model/caller_language.hpp"
#include "core/model/kernel_names.hpp"
#include "kscope/errors.hpp"

namespace kscope::ncu {
namespace {

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

const std::string& field(const NcuCsv& csv, std::size_t row, const std::string& column, const std::string& source) {
  const auto index = csv.find(column);
  if (!index) throw BackendError(source + " has no \"" + column + "\" column; is it an export of ncu's raw page?");
  return csv.rows[row][*index];
}

std::size_t id_of(const NcuCsv& csv, std::size_t row, const std::string& source) {
  const auto id = parse_ncu_number(field(csv, row, "ID", source));
  if (!id || *id < 0) throw BackendError(source + ": row " + std::to_string(row + 1) + " has no numeric ID");
  return static_cast<std::size_t>(*id);
}

// A device clock attribute (CUDA reports kHz) in MHz, whatever unit the export printed.
double clock_mhz(const NcuCsv& csv, const std::string& column) {
  const auto index = csv.find(column);
  if (!index || csv.rows.empty()) return NAN;
  const auto value = parse_ncu_number(csv.rows.front()[*index]);
  if (!value) return NAN;
  const std::string unit = lower(csv.units[*index]);
  if (unit == "hz") return *value / 1e6;
  if (unit == "mhz") return *value;
  if (unit == "ghz") return *value * 1e3;
  return *value / 1e3;  // "khz", or no unit: CUDA's kHz
}

std::string text_or_empty(const NcuCsv& csv, const std::string& column) {
  const auto index = csv.find(column);
  return index && !csv.rows.empty() ? csv.rows.front()[*index] : std::string();
}

// A whole-number device attribute; 0 when absent.
std::size_t count_or_zero(const NcuCsv& csv, const std::string& column) {
  const auto value = parse_ncu_number(text_or_empty(csv, column));
  return value && *value > 0 ? static_cast<std::size_t>(*value) : 0;
}

// "9.0" -> 90; 0 when absent.
std::size_t compute_capability(const NcuCsv& csv) {
  const auto value = parse_ncu_number(text_or_empty(csv, "CC"));
  return value && *value > 0 ? static_cast<std::size_t>(std::lround(*value * 10)) : 0;
}

}  // namespace

UnitScale to_kscope_unit(const std::string& ncu_unit) {
  static const std::map<std::string, double> to_ns{{"ns", 1},      {"nsecond", 1},    {"us", 1e3},  {"usecond", 1e3},
                                                   {"ms", 1e6},    {"msecond", 1e6},  {"s", 1e9},   {"second", 1e9}};
  if (const auto it = to_ns.find(ncu_unit); it != to_ns.end()) return {"ns", it->second};
  return {ncu_unit, 1};
}

ReportContents read_report(const NcuCsv& plain, const NcuCsv& renamed, const std::vector<std::string>& metrics,
                           const std::string& report_path) {
  const std::string source = "the Nsight Compute report " + report_path;
  if (plain.rows.size() != renamed.rows.size())
    throw BackendError("the two exports of " + report_path + " list " + std::to_string(plain.rows.size()) + " and " +
                       std::to_string(renamed.rows.size()) + " kernels; re-run the sweep");
  std::map<std::size_t, std::string> nvtx_by_id;
  for (std::size_t r = 0; r < renamed.rows.size(); ++r)
    nvtx_by_id[id_of(renamed, r, source)] = field(renamed, r, "Kernel Name", source);

  ReportContents out;
  std::vector<std::size_t> columns;
  std::vector<double> factors;
  for (const auto& m : metrics) {
    const auto index = plain.find(m);
    if (!index) {
      throw BackendError("Nsight Compute did not collect metric '" + m + "' (" + source +
                         " has no such column): ncu does not know this name for this GPU and skips it without "
                         "failing. List the valid names with 'ncu --query-metrics --query-metrics-mode suffix' "
                         "(add '--chip gh100' without a GPU) and correct " + detail::option("metrics"));
    }
    const UnitScale scale = to_kscope_unit(plain.units[*index]);
    out.metrics.push_back({m, scale.unit, "Nsight Compute metric " + m});
    columns.push_back(*index);
    factors.push_back(scale.factor);
  }

  for (std::size_t r = 0; r < plain.rows.size(); ++r) {
    ReportKernel k;
    k.id = id_of(plain, r, source);
    k.kernel = demangle(field(plain, r, "Kernel Name", source));
    const auto nvtx = nvtx_by_id.find(k.id);
    if (nvtx == nvtx_by_id.end())
      throw BackendError("kernel ID " + std::to_string(k.id) + " of " + report_path +
                         " is missing from its --print-nvtx-rename export; re-run the sweep");
    k.nvtx_name = nvtx->second;
    for (std::size_t m = 0; m < metrics.size(); ++m) {
      const std::string& text = plain.rows[r][columns[m]];
      const auto value = parse_ncu_number(text);
      if (!value) {
        const std::size_t missing = static_cast<std::size_t>(std::count_if(
            plain.rows.begin(), plain.rows.end(), [&](const auto& row) { return !parse_ncu_number(row[columns[m]]); }));
        throw BackendError(
            "Nsight Compute reports metric '" + metrics[m] + "' as \"" + text + "\" for " + std::to_string(missing) +
            " of " + std::to_string(plain.rows.size()) + " kernels in " + report_path + " (first: ID " +
            std::to_string(k.id) + ", " + k.kernel + ")" +
            (is_not_available(text)
                 ? ": ncu could not collect it. An unknown or misspelt name reads n/a without failing the run, and "
                   "so does a metric this GPU or replay mode cannot give. Check the name with 'ncu --query-metrics "
                   "--query-metrics-mode suffix' and correct " + detail::option("metrics")
                 : std::string(": it is not a number, so kscope cannot aggregate it; choose a numeric metric")));
      }
      k.values.push_back(*value * factors[m]);
    }
    out.kernels.push_back(std::move(k));
  }
  out.gpu = text_or_empty(plain, "device__attribute_display_name");
  out.host = text_or_empty(plain, "Host Name");
  out.rated_sm_clock_mhz = clock_mhz(plain, "device__attribute_clock_rate");
  out.rated_memory_clock_mhz = clock_mhz(plain, "device__attribute_memory_clock_rate");
  out.sm_count = count_or_zero(plain, "device__attribute_multiprocessor_count");
  out.compute_capability = compute_capability(plain);
  out.memory_bus_width_bits = count_or_zero(plain, "device__attribute_global_memory_bus_width");
  return out;
}

}  // namespace kscope::ncu

#pragma once
// What kscope takes from an Nsight Compute report: the requested metric of every profiled kernel,
// with its name and its NVTX range, from two CSV exports of the raw page joined by ncu's ID:
//   plain    `ncu --import R --csv --page raw --print-units base`           real kernel names
//   renamed  the same with `--print-nvtx-rename kernel`                     names of their NVTX ranges
#include <cmath>
#include <cstddef>
#include <string>
#include <vector>

#include "backends/ncu/ncu_csv.hpp"
#include "kscope/measurement_backend.hpp"

namespace kscope::ncu {

struct ReportKernel {
  std::size_t id = 0;          // ncu's ID: the profiling order
  std::string kernel;          // demangled name
  std::string nvtx_name;       // its innermost NVTX push/pop range (the renamed export's name)
  std::vector<double> values;  // one per requested metric, in base units (durations in ns)
};

struct ReportContents {
  std::vector<MetricSpec> metrics;  // the requested metrics with the report's units
  std::vector<ReportKernel> kernels;
  std::string gpu;                  // device__attribute_display_name; empty when absent
  std::string host;                 // "Host Name"
  double rated_sm_clock_mhz = NAN;  // device__attribute_clock_rate
  double rated_memory_clock_mhz = NAN;
  // What the roofs come from (kscope/roofline.hpp); 0 when the export lacks them.
  std::size_t sm_count = 0;               // device__attribute_multiprocessor_count
  std::size_t compute_capability = 0;     // "CC" ("9.0" -> 90)
  std::size_t memory_bus_width_bits = 0;  // device__attribute_global_memory_bus_width
};

// Throws BackendError naming the report for a metric ncu did not collect (no column, or "n/a":
// ncu exits 0 for an unknown metric), a value that is not a number, or exports that disagree.
ReportContents read_report(const NcuCsv& plain, const NcuCsv& renamed, const std::vector<std::string>& metrics,
                           const std::string& report_path);

// A unit as printed by ncu and the factor to kscope's unit for it: durations become ns
// ("us" -> {"ns", 1000}), everything else stays as it is ({"byte", 1}).
struct UnitScale {
  std::string unit;
  double factor = 1;
};
UnitScale to_kscope_unit(const std::string& ncu_unit);

}  // namespace kscope::ncu

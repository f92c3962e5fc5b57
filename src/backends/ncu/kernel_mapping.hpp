#pragma once
// Joins the kernels of an Nsight Compute report to the regions of the recorded runs the child
// process listed in its manifest, by the coordinates in each kernel's NVTX range name (see
// range_name.hpp), never by position. Pure logic, tested on recorded exports.
#include <cstddef>
#include <string>
#include <vector>

#include "backends/ncu/child_manifest.hpp"
#include "backends/ncu/ncu_report.hpp"
#include "kscope/measurement_backend.hpp"

namespace kscope::ncu {

// [region] -> what ran in it, for one recorded run.
using RunKernels = std::vector<std::vector<KernelMeasurement>>;

struct MappingContext {
  std::string report_path;
  std::string log_path;
  bool per_kernel = true;  // ReplayMode::kernel; false: range replay, one result per region, no kernel names
};

// One RunKernels per manifest run, in manifest order. Throws BackendError for a kernel outside
// every kscope range (a user NVTX range inside an annotation hides kscope's), coordinates of no
// recorded run, or kernel counts that differ between the runs of one config and annotation.
std::vector<RunKernels> map_kernels(const ChildManifest& manifest, const ReportContents& report,
                                    const MappingContext& context);

}  // namespace kscope::ncu

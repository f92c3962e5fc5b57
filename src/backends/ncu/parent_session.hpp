#pragma once
// Backend::ncu in the calling process: re-runs this program under ncu with the target profile()
// call named in the environment, waits, diagnoses failures from ncu's log and the child's
// manifest, imports the report and aggregates ncu's kernels by the regions the child recorded.
//
// Files (kept; their paths are in the messages, and the report's in SessionInfo::report_path):
//   with Settings::output_prefix P:  P ncu_report.ncu-rep, P ncu.log, P ncu_program.log,
//                                    P ncu_manifest.json, P ncu_raw.csv, P ncu_nvtx.csv
//   without:                         the same names in a new directory $TMPDIR/kscope-ncu-XXXXXX
#include <cstddef>
#include <vector>

#include "backends/ncu/child_manifest.hpp"
#include "backends/ncu/kernel_mapping.hpp"
#include "kscope/profile.hpp"

namespace kscope::ncu {

// `ordinal`: this call's position among the process's profile() calls (1-based).
Results profile_under_ncu(const Sweep& sweep, const Settings& settings, std::size_t ordinal);

// The engine's rules (attribution, ignore_kernel_list, combine_kernel_metrics, derive_metric,
// statistics, normalization, output files) applied to the kernels ncu measured in the regions the
// child recorded (`kernels`: one entry per manifest run, from map_kernels).
Results results_from_report(const Sweep& sweep, const Settings& settings, const SessionInfo& session,
                            const std::vector<MetricSpec>& metrics, const ChildManifest& manifest,
                            const std::vector<RunKernels>& kernels);

}  // namespace kscope::ncu

#include "backends/ncu/kernel_mapping.hpp"

#include <map>

#include "backends/ncu/range_name.hpp"
#include "core/model/backend_choice.hpp"
#include "kscope/errors.hpp"

namespace kscope::ncu {
namespace {

std::string where(const MappingContext& c) {
  return " (report " + c.report_path + ", Nsight Compute log " + c.log_path + ")";
}

std::string runs_list(const std::vector<std::size_t>& runs) {
  std::string out;
  for (std::size_t r : runs) out += (out.empty() ? "" : ", ") + std::to_string(r + 1);
  return out;
}

// Every non-failed (config, annotation) must hold the same number of kernels in each of its runs.
void check_counts(const ChildManifest& manifest, const std::vector<RunKernels>& out, const MappingContext& context) {
  // (config, annotation) -> kernel count -> runs with that count
  std::map<std::pair<std::size_t, std::string>, std::map<std::size_t, std::vector<std::size_t>>> counts;
  for (std::size_t i = 0; i < manifest.runs.size(); ++i) {
    const ManifestRun& run = manifest.runs[i];
    for (std::size_t g = 0; g < run.regions.size(); ++g)
      if (!run.regions[g].failed) counts[{run.config, run.regions[g].name}][out[i][g].size()].push_back(run.run);
  }
  for (const auto& [key, by_count] : counts) {
    if (by_count.size() < 2) continue;
    std::string detail;
    for (const auto& [count, runs] : by_count)
      detail += "\n  - " + std::to_string(count) + " kernel(s) in run(s) " + runs_list(runs);
    throw BackendError("kernel count mismatch: Nsight Compute profiled different numbers of kernels in the runs of "
                       "annotation '" + key.second + "', config " + std::to_string(key.first + 1) + ":" + detail +
                       "\nEvery run of a config must launch the same kernels. ncu drops kernels it cannot profile "
                       "(see its log), and a body whose launches depend on the run (caching, autotuning on first "
                       "use) changes the count: warm such code up before profile(), or raise warmup_runs" +
                       where(context));
  }
}

}  // namespace

std::vector<RunKernels> map_kernels(const ChildManifest& manifest, const ReportContents& report,
                                    const MappingContext& context) {
  std::map<std::pair<std::size_t, std::size_t>, std::size_t> run_index;  // (config, run) -> manifest position
  std::vector<RunKernels> out;
  for (std::size_t i = 0; i < manifest.runs.size(); ++i) {
    run_index[{manifest.runs[i].config, manifest.runs[i].run}] = i;
    out.emplace_back(manifest.runs[i].regions.size());
  }
  for (const ReportKernel& k : report.kernels) {
    auto id = parse_range_id(k.nvtx_name);
    if (!id) id = parse_range_id(k.kernel);  // range replay: the result carries the range's own name
    if (!id) {
      throw BackendError("kernel ID " + std::to_string(k.id) + " (" + k.kernel + ") lies in NVTX range '" + k.nvtx_name +
                         "', not in a kscope annotation range. An NVTX push/pop range opened inside an annotation "
                         "(by your code or a library) hides kscope's range: close it before the annotation ends, "
                         "move it outside the annotation, or use " + detail::backend_choice(Backend::counters) + where(context));
    }
    const auto run = run_index.find({id->config, id->run});
    if (run == run_index.end() || id->region >= out[run->second].size()) {
      throw BackendError("kernel ID " + std::to_string(k.id) + " (" + k.kernel + ") is marked for config " +
                         std::to_string(id->config + 1) + ", run " + std::to_string(id->run + 1) + ", region " +
                         std::to_string(id->region + 1) +
                         ", which the profiled process did not record; the report belongs to another run of the "
                         "program, re-run the sweep" + where(context));
    }
    out[run->second][id->region].push_back({context.per_kernel ? k.kernel : std::string(), k.values});
  }
  check_counts(manifest, out, context);
  return out;
}

}  // namespace kscope::ncu

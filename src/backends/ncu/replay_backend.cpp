#include "backends/ncu/replay_backend.hpp"

#include "kscope/annotation.hpp"
#include "kscope/errors.hpp"

namespace kscope::ncu {

ReplayBackend::ReplayBackend(std::vector<MetricSpec> metrics, bool per_kernel, SessionInfo info,
                             ChildManifest manifest, std::vector<RunKernels> kernels)
    : metrics_(std::move(metrics)),
      per_kernel_(per_kernel),
      info_(std::move(info)),
      manifest_(std::move(manifest)),
      kernels_(std::move(kernels)) {}

Body ReplayBackend::body() {
  return [this](const Config& config) {
    for (const ManifestRegion& region : current(config.index()).regions) {
      Annotation annotation(region.name);
      if (region.failed) annotation.mark_failed(region.reason);
    }
  };
}

void ReplayBackend::begin_run() {
  if (next_ >= manifest_.runs.size())
    throw BackendError("the profiled child process recorded " + std::to_string(manifest_.runs.size()) +
                       " runs, fewer than the sweep has (kscope bug: please report it with this message)");
  ++next_;
}

const ManifestRun& ReplayBackend::current(std::size_t config) const {
  const ManifestRun& run = manifest_.runs.at(next_ - 1);
  if (run.config != config)
    throw BackendError("the profiled child process recorded config " + std::to_string(run.config + 1) +
                       " where the replay is at config " + std::to_string(config + 1) +
                       " (kscope bug: please report it with this message)");
  return run;
}

std::vector<std::vector<KernelMeasurement>> ReplayBackend::collect_run(std::size_t region_count) {
  RunKernels run = kernels_.at(next_ - 1);
  run.resize(region_count);
  return run;
}

}  // namespace kscope::ncu

#include "backends/ncu/child_backend.hpp"

#include <nvtx3/nvToolsExt.h>

#include <cmath>

#include "backends/ncu/range_name.hpp"
#include "core/session.hpp"

namespace kscope::ncu {
namespace {

// Created once and kept: NVTX domains live as long as the process.
nvtxDomainHandle_t domain() {
  static const nvtxDomainHandle_t handle = nvtxDomainCreateA(kNvtxDomain);
  return handle;
}

}  // namespace

ChildBackend::ChildBackend(std::vector<std::string> metrics, std::size_t warmup_runs)
    : metrics_(std::move(metrics)), warmup_runs_(warmup_runs) {}

Body ChildBackend::wrap(const Body& body) {
  return [this, body](const Config& config) {
    start_body(config.index());
    body(config);
  };
}

void ChildBackend::start_body(std::size_t config) {
  if (config != config_) {
    config_ = config;
    run_in_config_ = 0;
  } else {
    ++run_in_config_;
  }
}

std::vector<MetricSpec> ChildBackend::metrics() const {
  std::vector<MetricSpec> specs;
  for (const auto& m : metrics_) specs.push_back({m, "", "measured by Nsight Compute in this process"});
  return specs;
}

SessionInfo ChildBackend::describe() const {
  SessionInfo info;
  info.backend = "ncu (profiled child process)";
  return info;
}

void ChildBackend::region_begin(std::size_t region) {
  if (!recorded()) return;
  // The recorder calls this with the region's name already registered.
  const std::string& name = detail::active_recorder()->names()[region];
  const std::string text = range_name(name, {config_, run_in_config_ - warmup_runs_, region});
  nvtxEventAttributes_t attributes{};
  attributes.version = NVTX_VERSION;
  attributes.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  attributes.messageType = NVTX_MESSAGE_TYPE_ASCII;
  attributes.message.ascii = text.c_str();
  nvtxDomainRangePushEx(domain(), &attributes);
  range_open_ = true;
}

void ChildBackend::region_end(std::size_t) {
  if (!range_open_) return;
  nvtxDomainRangePop(domain());
  range_open_ = false;
}

std::vector<std::vector<KernelMeasurement>> ChildBackend::collect_run(std::size_t region_count) {
  if (recorded()) {
    const detail::RunRegions& regions = detail::active_recorder()->regions();
    ManifestRun run{config_, run_in_config_ - warmup_runs_, {}};
    for (std::size_t g = 0; g < region_count; ++g)
      run.regions.push_back({regions.names[g], regions.failed[g], regions.reasons[g]});
    manifest_.runs.push_back(std::move(run));
  }
  // One placeholder per region, so the engine's attribution rules pass; the parent applies them to ncu's kernels.
  const KernelMeasurement placeholder{"", std::vector<double>(metrics_.size(), NAN)};
  return std::vector<std::vector<KernelMeasurement>>(region_count, {placeholder});
}

void ChildBackend::abandon_run() noexcept { region_end(0); }

}  // namespace kscope::ncu

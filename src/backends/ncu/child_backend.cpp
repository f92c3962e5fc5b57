#include "backends/ncu/child_backend.hpp"

#include <nvtx3/nvToolsExt.h>

#include <cmath>

#include "backends/ncu/range_name.hpp"

namespace kscope::ncu {
namespace {

// Created once and kept: NVTX domains live as long as the process.
nvtxDomainHandle_t domain() {
  static const nvtxDomainHandle_t handle = nvtxDomainCreateA(kNvtxDomain);
  return handle;
}

}  // namespace

ChildBackend::ChildBackend(std::vector<std::string> metrics) : metrics_(std::move(metrics)) {}

std::vector<MetricSpec> ChildBackend::metrics() const {
  std::vector<MetricSpec> specs;
  for (const auto& m : metrics_) specs.push_back({m, "", "measured by Nsight Compute in this process"});
  return specs;
}

SessionInfo ChildBackend::describe() const {
  SessionInfo info;
  info.backend = Backend::ncu;
  return info;
}

void ChildBackend::region_begin(const RegionContext& region) {
  if (!region.run.recorded) return;
  const std::string text = range_name(region.name, {region.run.config, region.run.recorded_run, region.index});
  nvtxEventAttributes_t attributes{};
  attributes.version = NVTX_VERSION;
  attributes.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  attributes.messageType = NVTX_MESSAGE_TYPE_ASCII;
  attributes.message.ascii = text.c_str();
  nvtxDomainRangePushEx(domain(), &attributes);
  range_open_ = true;
}

void ChildBackend::region_end(const RegionContext&) { pop_range(); }

void ChildBackend::pop_range() noexcept {
  if (!range_open_) return;
  nvtxDomainRangePop(domain());
  range_open_ = false;
}

void ChildBackend::end_run(const RunContext& run, const std::vector<RegionRecord>& regions) {
  region_count_ = regions.size();
  if (run.recorded) manifest_.runs.push_back({run.config, run.recorded_run, regions});
}

std::vector<RunMeasurement> ChildBackend::collect_batch() {
  // One placeholder per region, so the engine's attribution rules pass; the parent applies them to ncu's kernels.
  const KernelMeasurement placeholder{"", std::vector<double>(metrics_.size(), NAN)};
  return {RunMeasurement(region_count_, {placeholder})};
}

void ChildBackend::abandon_run(const RunContext&) noexcept { pop_range(); }

}  // namespace kscope::ncu

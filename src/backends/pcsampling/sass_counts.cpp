#include "backends/pcsampling/sass_counts.hpp"

#include <cuda_runtime_api.h>
#include <cupti_sass_metrics.h>
#include <dlfcn.h>

#include <map>
#include <tuple>

#include "backends/counters/counter_errors.hpp"
#include "backends/counters/cupti_params.hpp"
#include "backends/counters/range_profiler.hpp"
#include "kscope/errors.hpp"

namespace kscope::pcsampling {
namespace {

using counters::check_counters;

std::uint64_t metric_id(const std::string& chip, const char* name) {
  auto p = CUPTI_PARAMS(CUpti_SassMetrics_GetProperties_Params);
  p.pChipName = chip.c_str();
  p.pMetricName = name;
  check_counters(cuptiSassMetricsGetProperties(&p), "cuptiSassMetricsGetProperties");
  return p.metric.metricId;
}

// What CUPTI's refusal to configure the SASS metrics comes with: the GPU memory left beside the
// process's own and the CUPTI library that refused (a process may load another CUPTI than the
// toolkit's: a Python package's), so that the note says which of the two to look at.
std::string out_of_memory() {
  std::string facts;
  std::size_t free = 0, total = 0;  // of the session's device, current on this thread
  if (cudaMemGetInfo(&free, &total) == cudaSuccess)
    facts = std::to_string(free >> 20) + " of " + std::to_string(total >> 20) + " MiB of GPU memory free";
  Dl_info library{};
  if (dladdr(reinterpret_cast<void*>(&cuptiSassMetricsSetConfig), &library) != 0 && library.dli_fname)
    facts += (facts.empty() ? "" : "; ") + std::string("CUPTI ") + library.dli_fname;
  return "cuptiSassMetricsSetConfig: CUPTI_ERROR_OUT_OF_MEMORY (" + facts +
         "). The samples are complete; only the executed-instruction counts are missing. Free GPU memory this "
         "process holds (PyTorch: torch.cuda.empty_cache()) or measure the counts in a process of their own; "
         "sass_metrics=False leaves them out without this note";
}

}  // namespace

SassCounter::SassCounter(int device_ordinal, CUcontext context) : device_(device_ordinal), context_(context) {
  const std::string chip = counters::chip_of_device(device_ordinal);
  executed_id_ = metric_id(chip, "smsp__sass_inst_executed");
  threads_id_ = metric_id(chip, "smsp__sass_thread_inst_executed");
  CUpti_SassMetrics_Config configs[2] = {{executed_id_, CUPTI_SASS_METRICS_OUTPUT_GRANULARITY_GPU},
                                         {threads_id_, CUPTI_SASS_METRICS_OUTPUT_GRANULARITY_GPU}};
  auto p = CUPTI_PARAMS(CUpti_SassMetricsSetConfig_Params);
  p.numOfMetricConfig = 2;
  p.pConfigs = configs;
  p.deviceIndex = static_cast<std::uint32_t>(device_ordinal);
  const CUptiResult status = cuptiSassMetricsSetConfig(&p);
  if (status == CUPTI_ERROR_OUT_OF_MEMORY) throw BackendError(out_of_memory());
  check_counters(status, "cuptiSassMetricsSetConfig");
}

SassCounter::~SassCounter() {
  if (counting_) {
    auto d = CUPTI_PARAMS(CUpti_SassMetricsDisable_Params);
    d.ctx = context_;
    cuptiSassMetricsDisable(&d);
  }
  auto p = CUPTI_PARAMS(CUpti_SassMetricsUnsetConfig_Params);
  p.deviceIndex = static_cast<std::uint32_t>(device_);
  cuptiSassMetricsUnsetConfig(&p);
}

void SassCounter::start() {
  auto p = CUPTI_PARAMS(CUpti_SassMetricsEnable_Params);
  p.ctx = context_;
  p.enableLazyPatching = 1;  // only the functions that run are patched
  check_counters(cuptiSassMetricsEnable(&p), "cuptiSassMetricsEnable");
  counting_ = true;
}

std::vector<SassCount> SassCounter::stop() {
  std::vector<SassCount> out;
  auto props = CUPTI_PARAMS(CUpti_SassMetricsGetDataProperties_Params);
  props.ctx = context_;
  check_counters(cuptiSassMetricsGetDataProperties(&props), "cuptiSassMetricsGetDataProperties");
  if (props.numOfPatchedInstructionRecords > 0) {
    const std::size_t records = props.numOfPatchedInstructionRecords, instances = props.numOfInstances;
    // Room for every metric's instances, whichever way CUPTI lays them out: unused slots keep id 0.
    std::vector<std::vector<CUpti_SassMetrics_InstanceValue>> values(
        records, std::vector<CUpti_SassMetrics_InstanceValue>(instances * 2));
    std::vector<CUpti_SassMetrics_Data> data(records);
    for (std::size_t i = 0; i < records; ++i) {
      data[i].structSize = sizeof(CUpti_SassMetrics_Data);
      data[i].pInstanceValues = values[i].data();
    }
    auto flush = CUPTI_PARAMS(CUpti_SassMetricsFlushData_Params);
    flush.ctx = context_;
    flush.numOfPatchedInstructionRecords = records;
    flush.numOfInstances = instances;
    flush.pMetricsData = data.data();
    check_counters(cuptiSassMetricsFlushData(&flush), "cuptiSassMetricsFlushData");
    std::map<std::tuple<std::string, std::uint64_t>, SassCount> merged;
    for (std::size_t i = 0; i < records; ++i) {
      const std::string function = data[i].functionName ? data[i].functionName : "";
      SassCount& c = merged[{function, data[i].pcOffset}];
      c.function = function;
      c.pc_offset = data[i].pcOffset;
      for (const auto& v : values[i]) {
        if (v.metricId == executed_id_) c.executed += v.value;
        else if (v.metricId == threads_id_) c.thread_executed += v.value;
      }
    }
    for (auto& [key, c] : merged) out.push_back(std::move(c));
  }
  auto d = CUPTI_PARAMS(CUpti_SassMetricsDisable_Params);
  d.ctx = context_;
  counting_ = false;
  check_counters(cuptiSassMetricsDisable(&d), "cuptiSassMetricsDisable");
  return out;
}

}  // namespace kscope::pcsampling

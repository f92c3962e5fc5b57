#include "backends/pcsampling/sass_counts.hpp"

#include <cuda_runtime_api.h>
#include <cupti_sass_metrics.h>
#include <dlfcn.h>

#include <cstdlib>
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
         "). The samples are complete; only the executed-instruction counts are missing, in every profile of this "
         "process (the counts are configured once per process and GPU). Measure them in a new process holding less "
         "GPU memory (PyTorch: torch.cuda.empty_cache() before the first profile); sass_metrics=False leaves them "
         "out without this note";
}

void set_config(int device, std::uint64_t executed_id, std::uint64_t threads_id) {
  CUpti_SassMetrics_Config configs[2] = {{executed_id, CUPTI_SASS_METRICS_OUTPUT_GRANULARITY_GPU},
                                         {threads_id, CUPTI_SASS_METRICS_OUTPUT_GRANULARITY_GPU}};
  auto p = CUPTI_PARAMS(CUpti_SassMetricsSetConfig_Params);
  p.numOfMetricConfig = 2;
  p.pConfigs = configs;
  p.deviceIndex = static_cast<std::uint32_t>(device);
  const CUptiResult status = cuptiSassMetricsSetConfig(&p);
  if (status == CUPTI_ERROR_OUT_OF_MEMORY) throw BackendError(out_of_memory());
  if (status == CUPTI_ERROR_INVALID_OPERATION)
    throw BackendError(
        "cuptiSassMetricsSetConfig: CUPTI_ERROR_INVALID_OPERATION: another tool in this process configured the SASS "
        "metrics on this GPU; the samples are complete, only the executed-instruction counts are missing");
  check_counters(status, "cuptiSassMetricsSetConfig");
}

// CUPTI allocates each flushed record's function name for the caller to free (NVIDIA's sass_metrics
// sample frees every record's).
struct FreeName {
  void operator()(const char* name) const noexcept { std::free(const_cast<char*>(name)); }
};

class CuptiSassCalls final : public SassCalls {
 public:
  CuptiSassCalls(CUcontext context, std::uint64_t executed_id, std::uint64_t threads_id)
      : context_(context), executed_id_(executed_id), threads_id_(threads_id) {}

  void enable() override {
    auto p = CUPTI_PARAMS(CUpti_SassMetricsEnable_Params);
    p.ctx = context_;
    p.enableLazyPatching = 1;  // only the functions that run are patched
    check_counters(cuptiSassMetricsEnable(&p), "cuptiSassMetricsEnable");
  }

  std::vector<SassCount> read() override {
    auto props = CUPTI_PARAMS(CUpti_SassMetricsGetDataProperties_Params);
    props.ctx = context_;
    check_counters(cuptiSassMetricsGetDataProperties(&props), "cuptiSassMetricsGetDataProperties");
    const std::size_t records = props.numOfPatchedInstructionRecords, instances = props.numOfInstances;
    if (records == 0 || instances == 0) return {};
    // Room for every metric's instances, whichever way CUPTI lays them out: unused slots keep id 0.
    std::vector<CUpti_SassMetrics_InstanceValue> values(records * instances * 2);
    std::vector<CUpti_SassMetrics_Data> data(records);
    for (std::size_t i = 0; i < records; ++i) {
      data[i].structSize = sizeof(CUpti_SassMetrics_Data);
      data[i].pInstanceValues = &values[i * instances * 2];
    }
    std::vector<std::unique_ptr<const char, FreeName>> names;
    names.reserve(records);
    auto flush = CUPTI_PARAMS(CUpti_SassMetricsFlushData_Params);
    flush.ctx = context_;
    flush.numOfPatchedInstructionRecords = records;
    flush.numOfInstances = instances;
    flush.pMetricsData = data.data();
    check_counters(cuptiSassMetricsFlushData(&flush), "cuptiSassMetricsFlushData");
    for (const auto& d : data) names.emplace_back(d.functionName);  // ours from here, whatever follows throws
    std::map<std::tuple<std::string, std::uint64_t>, SassCount> merged;
    for (std::size_t i = 0; i < records; ++i) {
      const std::string function = data[i].functionName ? data[i].functionName : "";
      SassCount& c = merged[{function, data[i].pcOffset}];
      c.function = function;
      c.pc_offset = data[i].pcOffset;
      for (std::size_t v = 0; v < instances * 2; ++v) {
        const CUpti_SassMetrics_InstanceValue& value = data[i].pInstanceValues[v];
        if (value.metricId == executed_id_) c.executed += value.value;
        else if (value.metricId == threads_id_) c.thread_executed += value.value;
      }
    }
    std::vector<SassCount> out;
    for (auto& [key, c] : merged) out.push_back(std::move(c));
    return out;
  }

  void disable() override {
    auto p = CUPTI_PARAMS(CUpti_SassMetricsDisable_Params);
    p.ctx = context_;
    check_counters(cuptiSassMetricsDisable(&p), "cuptiSassMetricsDisable");
  }

 private:
  CUcontext context_;
  std::uint64_t executed_id_, threads_id_;
};

}  // namespace

SassCounter::SassCounter(int device_ordinal, CUcontext context) {
  const std::string chip = counters::chip_of_device(device_ordinal);
  const std::uint64_t executed = metric_id(chip, "smsp__sass_inst_executed");
  const std::uint64_t threads = metric_id(chip, "smsp__sass_thread_inst_executed");
  SassConfigurations::process().configure(device_ordinal, [&] { set_config(device_ordinal, executed, threads); });
  calls_ = std::make_unique<CuptiSassCalls>(context, executed, threads);
}

SassCounter::~SassCounter() = default;

void SassCounter::start() {
  if (range_) throw InternalError("SassCounter::start: counting is already on");
  range_.emplace(*calls_);
}

std::vector<SassCount> SassCounter::stop() {
  if (!range_) return {};
  try {
    std::vector<SassCount> counts = range_->finish();
    range_.reset();
    return counts;
  } catch (...) {
    range_.reset();
    throw;
  }
}

}  // namespace kscope::pcsampling

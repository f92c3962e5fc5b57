#pragma once
// Hardware metrics for Backend::counters, named as Nsight Compute names them
// (gpu__time_duration.sum, dram__bytes_read.sum, sm__throughput.avg.pct_of_peak_sustained_elapsed):
// list a chip's metrics, describe one, count the replay passes a set needs, and summarise
// results as Speed of Light. Everything but the current-device chip lookup runs without a GPU
// (CUPTI's profiler host API), so metric lists can be checked offline with chip "GH100".
//
// chip arguments: a CUPTI chip name, case-insensitive ("GH100" is the H100/H200); empty means the
// chip of the current CUDA device.
#include <cstddef>
#include <string>
#include <vector>

#include "kscope/results.hpp"
#include "kscope/settings.hpp"
#include "kscope/table.hpp"

namespace kscope {

// The one metric each duration backend measures (default_metrics() in kscope/backend_registry.hpp
// gives every backend's).
inline constexpr const char* kCuptiKernelDuration = "cupti__kernel_duration";
inline constexpr const char* kEventsRegionDuration = "events__region_duration";
// The pcsampling backend's: the program-counter samples of a region's kernels in one run
// (kscope/lines.hpp gives them per source line).
inline constexpr const char* kPcSamples = "pcsampling__samples";
// Nsight Compute's kernel duration, which the counters and ncu backends measure (ncu's default).
inline constexpr const char* kGpuTimeDuration = "gpu__time_duration.sum";

// CUPTI's three kinds of metric, which decide the suffixes a full name needs:
// counter    base + rollup (.sum .avg .min .max) [+ submetric]: dram__bytes_read.sum.per_second
// ratio      base + submetric only (.pct .ratio .max_rate):       lts__t_sector_hit_rate.pct
// throughput base + rollup + submetric:                            sm__throughput.avg.pct_of_peak_sustained_elapsed
enum class MetricType { counter, ratio, throughput };
std::string to_string(MetricType t);

// A metric of a chip's database (list_metrics, describe_metric): its name, kind, unit and meaning.
struct MetricInfo {
  std::string name;                   // the base name (list_metrics) or the full name asked for
  MetricType type = MetricType::counter;  // counter, ratio or throughput
  std::string unit;                   // as Nsight Compute reports it: "ns", "byte", "%", "inst/cycle", ...
  std::string hw_unit;                // the unit that counts it: "dram", "sm", "lts", ...
  std::string description;  // what it measures, in words
  std::vector<std::string> suffixes;  // what may follow the base (".sum", ".avg.pct_of_peak_sustained_elapsed", ...)
};

// Every base metric of the chip, sorted by name, with its suffixes.
std::vector<MetricInfo> list_metrics(const std::string& chip = "");

// A full metric name's type, unit and description. Throws ConfigError for a name the range
// profiler cannot collect, with up to 5 closest valid names. Nsight Compute's launch attributes
// launch__block_size, launch__grid_size, launch__thread_count, launch__sm_count and
// launch__shared_mem_per_block_dynamic are not counters: Backend::counters computes them from each
// kernel's launch (hw_unit "launch", no replay pass); other launch__ names are refused.
MetricInfo describe_metric(const std::string& name, const std::string& chip = "");

// How many times Backend::counters runs the body per run to collect `metrics` together
// (e.g. 8 for sm__throughput.avg.pct_of_peak_sustained_elapsed on GH100). Validates like
// describe_metric.
std::size_t count_passes(const std::vector<std::string>& metrics, const std::string& chip = "");

// The chip names CUPTI knows, and the chip of CUDA device `device` (-1: the current one).
std::vector<std::string> supported_chips();
std::string device_chip(int device = -1);

// --- Speed of Light -----------------------------------------------------------------------------

// The metric preset behind speed_of_light() (and Backend::counters' default metric list):
// gpu__time_duration.sum, sm__throughput.avg.pct_of_peak_sustained_elapsed (compute),
// gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed (memory: the busiest of DRAM,
// L2, L1 and shared memory, as in ncu's "Memory Throughput") and
// dram__throughput.avg.pct_of_peak_sustained_elapsed. 9 replay passes on GH100.
std::vector<std::string> sol_metrics();

enum class Bottleneck { compute_bound, memory_bound, latency_bound };
std::string to_string(Bottleneck b);  // "compute-bound", "memory-bound", "latency-bound"

// The rule, as in Nsight Compute's Speed-of-Light section: the higher of compute and memory
// throughput decides when it reaches 60% of peak; when both stay below 60%, neither unit is
// busy and the kernel is latency-bound (too little parallelism, stalls, or launch-sized work).
inline constexpr double kBottleneckThresholdPct = 60.0;
std::string bottleneck_rule();
Bottleneck classify_bottleneck(double compute_throughput_pct, double memory_throughput_pct);

// One row per (annotation, config) of counter results holding the sol_metrics() throughputs:
// Annotation, the config axes, Kernel, DurationNs (when gpu__time_duration.sum was collected),
// ComputeThroughputPct, MemoryThroughputPct, DramThroughputPct (when collected), Bottleneck.
// Values are each metric's mean over the runs (never normalized). Throws ConfigError when the results lack
// the compute or memory throughput (collect them with Settings::metrics = sol_metrics()).
Table speed_of_light(const Results& results);

}  // namespace kscope

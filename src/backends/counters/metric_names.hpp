#pragma once
// Nsight Compute metric names, taken apart without CUPTI: "dram__bytes_read.sum.per_second" is the
// base "dram__bytes_read" and the suffix ".sum.per_second" (rollup, then submetric). Also the
// "did you mean" logic, given a chip's base names and a way to list a base's suffixes.
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

namespace kscope::counters {

struct MetricName {
  std::string base;    // "dram__bytes_read"; may carry a group prefix ("FBSP.TriageCompute.dramc__throughput")
  std::string suffix;  // ".sum.per_second", or empty
};

// Splits at the first '.' after the first "__" (a group prefix contains dots before it), or at
// the first '.' when the name has no "__".
MetricName split_metric_name(const std::string& name);

// Why `name` can never be collected by the range profiler, when it belongs to a family that ncu
// computes itself from launch parameters or device attributes (launch__*, device__attribute_*,
// ...); empty otherwise.
std::string ncu_only_explanation(const std::string& name);

// A metric's unit as Nsight Compute reports it (its raw CSV with --print-units base, and Nsight
// Python's Unit column), from CUPTI's dimensional unit: "nanosecond" -> "ns", "percent" -> "%",
// "instruction/gpc_cycle" -> "inst/cycle", "l2_sector" -> "sector". A unit made of several factors
// ("gpc_cyclewarp") keeps their order, joined by '*'. A name outside the table stays as CUPTI gives it.
std::string ncu_unit(const std::string& cupti_unit);

// Up to `limit` valid full names closest to `wanted`: the base is matched against `bases`, then
// the suffix against the suffixes of each candidate base.
std::vector<std::string> suggest_metric_names(
    const std::string& wanted, const std::vector<std::string>& bases,
    const std::function<std::vector<std::string>(const std::string& base)>& suffixes_of,
    std::size_t limit = 5);

}  // namespace kscope::counters

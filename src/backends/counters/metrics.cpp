// The public metric queries of kscope/metrics.hpp, on CUPTI's host API.
#include <cuda_runtime_api.h>

#include "backends/counters/launch_metrics.hpp"
#include "backends/counters/metric_names.hpp"
#include "backends/counters/profiler_host.hpp"
#include "backends/counters/range_profiler.hpp"
#include "core/model/caller_language.hpp"
#include "device/cuda_check.hpp"
#include "kscope/errors.hpp"
#include "kscope/metrics.hpp"

namespace kscope {
namespace {

const counters::MetricCatalog& catalog(const std::string& chip) {
  return counters::MetricCatalog::of(chip.empty() ? device_chip(-1) : counters::canonical_chip(chip));
}

// Where a metric name came from, for the message that refuses it.
std::string asked_by(const std::string& function, const std::string& flag) {
  if (detail::caller() == detail::Caller::command_line) return " for kscope metrics " + flag + ": ";
  return detail::spell(" for kscope::" + function + "(): ", " for kscope." + function + "(): ");
}

}  // namespace

std::vector<std::string> supported_chips() { return counters::supported_chips(); }

std::string device_chip(int device) {
  try {
    if (device < 0) device::check_cuda(cudaGetDevice(&device), "cudaGetDevice");
    device::check_cuda(cudaFree(nullptr), "cudaFree(0)");
  } catch (const CudaError& e) {
    throw CudaError(std::string(e.what()) + ". Without a usable device, " +
                    detail::spell("name the chip instead (e.g. \"GH100\" for the H100/H200)",
                                  "name the chip instead (e.g. chip=\"GH100\" for the H100/H200)",
                                  "name the chip with --chip (e.g. --chip GH100 for the H100/H200; "
                                  "kscope metrics --chips lists them)"));
  }
  return counters::chip_of_device(device);
}

std::vector<MetricInfo> list_metrics(const std::string& chip) {
  const auto& c = catalog(chip);
  std::vector<MetricInfo> out;
  for (const auto& base : c.bases()) {
    MetricInfo info = c.properties(base).value_or(MetricInfo{base, c.type_of_base(base), "", "", "", {}});
    info.suffixes = c.suffixes(base);
    out.push_back(std::move(info));
  }
  return out;
}

MetricInfo describe_metric(const std::string& name, const std::string& chip) {
  if (const counters::LaunchMetric* launch = counters::find_launch_metric(name))
    return {name, MetricType::counter, launch->unit, "launch", launch->description, {}};
  const auto& c = catalog(chip);
  MetricInfo info = c.require(name, asked_by("describe_metric", "--describe"));
  info.suffixes = c.suffixes(counters::split_metric_name(name).base);
  return info;
}

std::size_t count_passes(const std::vector<std::string>& metrics, const std::string& chip) {
  if (metrics.empty()) throw ConfigError("count_passes() was given no metric names");
  const auto& c = catalog(chip);
  for (const auto& m : metrics)
    if (!counters::find_launch_metric(m)) c.require(m, asked_by("count_passes", "--passes"));
  return counters::MetricConfig(c.chip(), counters::MetricLayout(metrics, 0).counter_names()).passes();
}

}  // namespace kscope

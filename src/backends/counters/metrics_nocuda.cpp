// kscope/metrics.hpp for a kscope built without CUDA: the metric database lives in CUPTI.
#include "kscope/errors.hpp"
#include "kscope/metrics.hpp"

namespace kscope {
namespace {

[[noreturn]] void no_cupti() {
  throw BackendError(
      "kscope was built without CUDA (KSCOPE_ENABLE_CUDA=OFF), so it has no CUPTI metric database: install the "
      "CUDA toolkit (CUPTI) and reconfigure with -DKSCOPE_ENABLE_CUDA=ON");
}

}  // namespace

std::vector<MetricInfo> list_metrics(const std::string&) { no_cupti(); }
MetricInfo describe_metric(const std::string&, const std::string&) { no_cupti(); }
std::size_t count_passes(const std::vector<std::string>&, const std::string&) { no_cupti(); }
std::vector<std::string> supported_chips() { no_cupti(); }
std::string device_chip(int) { no_cupti(); }

}  // namespace kscope

#include "backends/counters/profiler_host.hpp"

#include <cupti.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cctype>
#include <deque>
#include <map>

#include "backends/counters/cupti_params.hpp"
#include "backends/counters/metric_names.hpp"
#include "base/text.hpp"
#include "core/model/caller_language.hpp"
#include "core/model/log.hpp"
#include "core/model/suggest.hpp"
#include "device/cuda_check.hpp"
#include "device/nvml.hpp"
#include "kscope/errors.hpp"

namespace kscope::counters {
namespace {

using device::check_cupti;

std::string upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

CUpti_MetricType cupti_type(MetricType t) {
  switch (t) {
    case MetricType::counter: return CUPTI_METRIC_TYPE_COUNTER;
    case MetricType::ratio: return CUPTI_METRIC_TYPE_RATIO;
    case MetricType::throughput: return CUPTI_METRIC_TYPE_THROUGHPUT;
  }
  return CUPTI_METRIC_TYPE__COUNT;
}

MetricType kscope_type(CUpti_MetricType t) {
  switch (t) {
    case CUPTI_METRIC_TYPE_RATIO: return MetricType::ratio;
    case CUPTI_METRIC_TYPE_THROUGHPUT: return MetricType::throughput;
    default: return MetricType::counter;
  }
}

std::string text(const char* s) { return s ? s : ""; }

// The host API needs no driver: NOT_INITIALIZED there means it could not load the toolkit's
// libnvperf_host.so (a toolkit whose library directory the loader is not told about).
void check_host_api(CUptiResult status, const char* call) {
  if (status == CUPTI_ERROR_NOT_INITIALIZED)
    throw BackendError(std::string(call) + " failed: CUPTI_ERROR_NOT_INITIALIZED (15). CUPTI's host API (the metric "
                       "database, which needs no GPU) could not load libnvperf_host.so, which the CUDA toolkit ships "
                       "beside libcupti: put that directory on the loader's path (an ldconfig entry for "
                       "/usr/local/cuda/lib64, as NVIDIA's packages add, or LD_LIBRARY_PATH)");
  check_cupti(status, call);
}

}  // namespace

std::vector<std::string> supported_chips() {
  auto p = CUPTI_PARAMS(CUpti_Profiler_Host_GetSupportedChips_Params);
  check_host_api(cuptiProfilerHostGetSupportedChips(&p), "cuptiProfilerHostGetSupportedChips");
  return std::vector<std::string>(p.ppChipNames, p.ppChipNames + p.numChips);
}

std::string canonical_chip(const std::string& chip) {
  const std::string name = upper(chip);
  const std::vector<std::string> chips = supported_chips();
  if (std::find(chips.begin(), chips.end(), name) != chips.end()) return name;
  throw ConfigError("unknown chip '" + chip + "': this CUPTI knows " + detail::quoted_list(chips) +
                    ". Closest: " + detail::quoted_list(detail::closest_names(name, chips, 3)) +
                    " (GH100 is the H100/H200; `kscope metrics --chips` lists them)");
}

HostObject::HostObject(const std::string& chip, const std::vector<std::uint8_t>& counter_availability) {
  auto p = CUPTI_PARAMS(CUpti_Profiler_Host_Initialize_Params);
  p.profilerType = CUPTI_PROFILER_TYPE_RANGE_PROFILER;
  p.pChipName = chip.c_str();
  p.pCounterAvailabilityImage = counter_availability.empty() ? nullptr : counter_availability.data();
  check_host_api(cuptiProfilerHostInitialize(&p), "cuptiProfilerHostInitialize");
  object_ = p.pHostObject;
}

HostObject::~HostObject() {
  auto p = CUPTI_PARAMS(CUpti_Profiler_Host_Deinitialize_Params);
  p.pHostObject = object_;
  cuptiProfilerHostDeinitialize(&p);
}

const MetricCatalog& MetricCatalog::of(const std::string& chip) {
  static std::mutex mutex;
  // Never destroyed: CUPTI's libraries may be finalised before static destructors run.
  static auto* catalogs = new std::map<std::string, const MetricCatalog*>;
  std::lock_guard lock(mutex);
  auto& slot = (*catalogs)[chip];
  if (!slot) slot = new MetricCatalog(chip);
  return *slot;
}

MetricCatalog::MetricCatalog(std::string chip) : chip_(std::move(chip)), host_(chip_, {}) {
  for (MetricType t : {MetricType::counter, MetricType::ratio, MetricType::throughput}) {
    auto p = CUPTI_PARAMS(CUpti_Profiler_Host_GetBaseMetrics_Params);
    p.pHostObject = host_.get();
    p.metricType = cupti_type(t);
    check_cupti(cuptiProfilerHostGetBaseMetrics(&p), "cuptiProfilerHostGetBaseMetrics");
    for (std::size_t i = 0; i < p.numMetrics; ++i) {
      bases_.emplace_back(p.ppMetricNames[i]);
      types_.emplace(bases_.back(), t);
    }
  }
  std::sort(bases_.begin(), bases_.end());
}

MetricType MetricCatalog::type_of_base(const std::string& base) const { return types_.at(base); }

std::vector<std::string> MetricCatalog::suffixes(const std::string& base) const {
  auto known = types_.find(base);
  if (known == types_.end()) return {};
  std::lock_guard lock(mutex_);
  auto p = CUPTI_PARAMS(CUpti_Profiler_Host_GetSubMetrics_Params);
  p.pHostObject = host_.get();
  p.metricType = cupti_type(known->second);
  p.pMetricName = base.c_str();
  check_cupti(cuptiProfilerHostGetSubMetrics(&p), "cuptiProfilerHostGetSubMetrics");
  return std::vector<std::string>(p.ppSubMetrics, p.ppSubMetrics + p.numOfSubmetrics);
}

std::optional<MetricInfo> MetricCatalog::properties(const std::string& name) const {
  std::lock_guard lock(mutex_);
  auto p = CUPTI_PARAMS(CUpti_Profiler_Host_GetMetricProperties_Params);
  p.pHostObject = host_.get();
  p.pMetricName = name.c_str();
  const CUptiResult status = cuptiProfilerHostGetMetricProperties(&p);
  if (status == CUPTI_ERROR_INVALID_METRIC_NAME) return std::nullopt;
  check_cupti(status, "cuptiProfilerHostGetMetricProperties");
  return MetricInfo{name, kscope_type(p.metricType), ncu_unit(text(p.pDimUnit)), text(p.pHwUnit), text(p.pDescription),
                    {}};
}

MetricInfo MetricCatalog::require(const std::string& name, const std::string& asked_by) const {
  if (const std::string why = ncu_only_explanation(name); !why.empty()) throw ConfigError(why);
  // GetMetricProperties accepts a bare base, but the range profiler needs a full name.
  const bool bare_base = types_.count(name) > 0;
  if (!bare_base) {
    if (auto info = properties(name)) return *info;
  }
  const auto suggestions =
      suggest_metric_names(name, bases_, [this](const std::string& base) { return suffixes(base); });
  const std::string problem =
      bare_base ? "metric '" + detail::cut(name) + "' needs a rollup or submetric suffix to be collected"
                : "unknown metric '" + detail::cut(name) + "' for chip " + chip_;
  // Nsight Python's sentence first (its users match on it), then what is wrong and the closest names.
  const std::string invalid = "Invalid value " + detail::python_list({detail::cut(name)}) + asked_by;
  throw ConfigError(invalid + problem +
                    (suggestions.empty() ? "" : ". Did you mean " + detail::quoted_list(suggestions) + "?") +
                    " (`kscope metrics --chip " + chip_ + "` lists every metric; " +
                    detail::spell("kscope::list_metrics()", "kscope.list_metrics()") + " returns them)");
}

std::string config_versions() {
  std::uint32_t cupti = 0;
  cuptiGetVersion(&cupti);
  int driver = 0;
  cudaDriverGetVersion(&driver);
  return "cupti " + std::to_string(cupti) + " (built with " + std::to_string(CUPTI_API_VERSION) + "), driver api " +
         std::to_string(driver) + ", driver " + device::driver_version(device::nvml());
}

void MetricConfig::add_metrics(const std::string& chip) {
  for (const auto& m : metrics_) names_.push_back(m.c_str());
  auto add = CUPTI_PARAMS(CUpti_Profiler_Host_ConfigAddMetrics_Params);
  add.pHostObject = host_.get();
  add.ppMetricNames = names_.data();
  add.numMetrics = names_.size();
  const CUptiResult added = cuptiProfilerHostConfigAddMetrics(&add);
  if (added == CUPTI_ERROR_INVALID_PARAMETER || added == CUPTI_ERROR_INVALID_METRIC_NAME) {
    // CUPTI does not say which name it refused; the device's counter availability can make a
    // name valid offline unusable here (e.g. on a MIG slice).
    throw ConfigError("CUPTI refused the metric list " + detail::quoted_list(metrics_) + " for chip " + chip +
                      " on this device (cuptiProfilerHostConfigAddMetrics). Some of them are not available "
                      "here, e.g. on a MIG slice or with device-level metrics (nvlrx__, pcie__) mixed with "
                      "others: remove metrics until the list is accepted");
  }
  check_cupti(added, "cuptiProfilerHostConfigAddMetrics");
}

MetricConfig::MetricConfig(const std::string& chip, std::vector<std::string> metrics,
                           const std::vector<std::uint8_t>& counter_availability)
    : metrics_(std::move(metrics)), host_(chip, counter_availability) {
  add_metrics(chip);
  auto size = CUPTI_PARAMS(CUpti_Profiler_Host_GetConfigImageSize_Params);
  size.pHostObject = host_.get();
  check_cupti(cuptiProfilerHostGetConfigImageSize(&size), "cuptiProfilerHostGetConfigImageSize");
  image_.resize(size.configImageSize);
  auto get = CUPTI_PARAMS(CUpti_Profiler_Host_GetConfigImage_Params);
  get.pHostObject = host_.get();
  get.configImageSize = image_.size();
  get.pConfigImage = image_.data();
  check_cupti(cuptiProfilerHostGetConfigImage(&get), "cuptiProfilerHostGetConfigImage");

  auto passes = CUPTI_PARAMS(CUpti_Profiler_Host_GetNumOfPasses_Params);
  passes.configImageSize = image_.size();
  passes.pConfigImage = image_.data();
  check_cupti(cuptiProfilerHostGetNumOfPasses(&passes), "cuptiProfilerHostGetNumOfPasses");
  passes_ = passes.numOfPasses;
}

MetricConfig::MetricConfig(const std::string& chip, std::vector<std::string> metrics,
                           const std::vector<std::uint8_t>& counter_availability, CachedConfig cached)
    : metrics_(std::move(metrics)), host_(chip, counter_availability), image_(std::move(cached.image)),
      passes_(cached.passes) {
  add_metrics(chip);
}

std::shared_ptr<const MetricConfig> MetricConfig::for_device(const std::string& chip,
                                                             const std::vector<std::string>& metrics,
                                                             const std::vector<std::uint8_t>& counter_availability,
                                                             const ConfigCache& cache) {
  // The last few configs of the process (a host object each), newest last.
  static std::mutex mutex;
  static auto* recent = new std::deque<std::pair<std::string, std::shared_ptr<const MetricConfig>>>;
  constexpr std::size_t kRecent = 8;
  const ConfigKey key{chip, metrics, counter_availability, config_versions()};
  const std::string text = key.text();
  std::lock_guard lock(mutex);
  for (const auto& [known, config] : *recent)
    if (known == text) return config;
  std::shared_ptr<const MetricConfig> config;
  if (auto cached = cache.load(key)) {
    config = std::make_shared<const MetricConfig>(chip, metrics, counter_availability, std::move(*cached));
    detail::log_debug("counters: configuration image read from " + cache.file_of(key).string());
  } else {
    config = std::make_shared<const MetricConfig>(chip, metrics, counter_availability);
    const bool stored = cache.store(key, {config->passes(), config->image()});
    detail::log_debug("counters: configuration image built" +
                      (stored ? ", stored in " + cache.file_of(key).string() : std::string(" (not stored)")));
  }
  recent->emplace_back(text, config);
  if (recent->size() > kRecent) recent->pop_front();
  return config;
}

std::vector<double> MetricConfig::evaluate(const std::vector<std::uint8_t>& counter_data, std::size_t range) const {
  std::vector<double> values(metrics_.size());
  auto p = CUPTI_PARAMS(CUpti_Profiler_Host_EvaluateToGpuValues_Params);
  p.pHostObject = host_.get();
  p.pCounterDataImage = counter_data.data();
  p.counterDataImageSize = counter_data.size();
  p.rangeIndex = range;
  p.ppMetricNames = const_cast<const char**>(names_.data());
  p.numMetrics = names_.size();
  p.pMetricValues = values.data();
  check_cupti(cuptiProfilerHostEvaluateToGpuValues(&p), "cuptiProfilerHostEvaluateToGpuValues");
  return values;
}

}  // namespace kscope::counters

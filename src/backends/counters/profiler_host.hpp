#pragma once
// CUPTI's profiler host API (cupti_profiler_host.h): the metric database of a chip and the
// configuration images built from it. It needs no GPU and no driver, only libcupti and
// libnvperf_host, so metric names, units and pass counts can be checked offline and in CI.
#include <cupti_profiler_host.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "backends/counters/config_cache.hpp"
#include "kscope/metrics.hpp"

namespace kscope::counters {

// The chips this CUPTI knows ("GV100" ... "GB20B"), upper case as CUPTI spells them.
std::vector<std::string> supported_chips();

// Upper-cases `chip` (ncu prints "gh100", CUPTI wants "GH100") and checks it against
// supported_chips(); ConfigError with the closest names otherwise.
std::string canonical_chip(const std::string& chip);

// One cuptiProfilerHostInitialize / Deinitialize pair.
class HostObject {
 public:
  // counter_availability: the image from the target device (filters out counters it cannot
  // give, e.g. on a MIG slice); empty offline.
  HostObject(const std::string& chip, const std::vector<std::uint8_t>& counter_availability);
  ~HostObject();
  HostObject(const HostObject&) = delete;
  HostObject& operator=(const HostObject&) = delete;

  CUpti_Profiler_Host_Object* get() const { return object_; }

 private:
  CUpti_Profiler_Host_Object* object_ = nullptr;
};

// A chip's metric database: base names, their suffixes and properties. One per chip per process.
class MetricCatalog {
 public:
  static const MetricCatalog& of(const std::string& chip);  // chip as canonical_chip() returns it

  const std::string& chip() const { return chip_; }
  const std::vector<std::string>& bases() const { return bases_; }  // all types, sorted
  MetricType type_of_base(const std::string& base) const;           // base must be in bases()
  std::vector<std::string> suffixes(const std::string& base) const; // empty for an unknown base
  // Nullopt for a name CUPTI does not know (with or without suffix).
  std::optional<MetricInfo> properties(const std::string& name) const;
  // The properties of a full, collectable name; ConfigError naming the problem and the closest
  // valid names otherwise. `asked_by` says where the name came from: " for Settings::metrics: ".
  MetricInfo require(const std::string& name, const std::string& asked_by) const;

 private:
  explicit MetricCatalog(std::string chip);

  std::string chip_;
  HostObject host_;
  std::vector<std::string> bases_;
  std::unordered_map<std::string, MetricType> types_;
  mutable std::mutex mutex_;  // CUPTI documents no thread safety for a host object
};

// CUPTI's and the driver's versions, for ConfigKey::versions.
std::string config_versions();

// The configuration image of one metric list, and the evaluation of counter data against it.
class MetricConfig {
 public:
  // The names must have passed MetricCatalog::require for this chip.
  MetricConfig(const std::string& chip, std::vector<std::string> metrics,
               const std::vector<std::uint8_t>& counter_availability = {});
  // The image and passes from `cached`; the metrics are still added to the host object, which
  // evaluates the counter data.
  MetricConfig(const std::string& chip, std::vector<std::string> metrics,
               const std::vector<std::uint8_t>& counter_availability, CachedConfig cached);

  // The config of `metrics` for a device: the process's earlier one for the same key, else one
  // whose image `cache` holds (CUPTI's scheduling of the passes skipped), else a new one, stored
  // there for the next process.
  static std::shared_ptr<const MetricConfig> for_device(const std::string& chip, const std::vector<std::string>& metrics,
                                                        const std::vector<std::uint8_t>& counter_availability,
                                                        const ConfigCache& cache);

  const std::vector<std::string>& metrics() const { return metrics_; }
  const std::vector<std::uint8_t>& image() const { return image_; }
  std::size_t passes() const { return passes_; }
  // One value per metric for range `range` of a decoded counter data image.
  std::vector<double> evaluate(const std::vector<std::uint8_t>& counter_data, std::size_t range) const;

 private:
  void add_metrics(const std::string& chip);

  std::vector<std::string> metrics_;
  std::vector<const char*> names_;  // into metrics_, as CUPTI takes them
  HostObject host_;
  std::vector<std::uint8_t> image_;
  std::size_t passes_ = 0;
};

}  // namespace kscope::counters

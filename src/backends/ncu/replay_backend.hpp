#pragma once
// The parent's side of Backend::ncu: after the child process ran under ncu, the sweep is replayed
// through the normal engine (attribution rules, ignore_kernel_list, combine_kernel_metrics,
// derive_metric, normalization, statistics, output files), with the annotations the child
// recorded and the kernels ncu measured in them. Nothing runs on the GPU here.
#include <cstddef>
#include <optional>
#include <vector>

#include "backends/ncu/child_manifest.hpp"
#include "backends/ncu/kernel_mapping.hpp"
#include "kscope/measurement_backend.hpp"
#include "kscope/profile.hpp"

namespace kscope::ncu {

// ncu held the clocks in the child (--clock-control); there is nothing to read or lock here.
class ReplayDevice final : public DeviceControl {
 public:
  ClockReading clocks() override { return {}; }
  std::optional<double> thermal_margin_c() override { return std::nullopt; }
  ClockReading lock_base_clocks() override { return {}; }
  void restore_clocks() noexcept override {}
};

class ReplayBackend final : public MeasurementBackend {
 public:
  // `kernels` holds one entry per manifest run (map_kernels).
  ReplayBackend(std::vector<MetricSpec> metrics, bool per_kernel, SessionInfo info, ChildManifest manifest,
                std::vector<RunKernels> kernels);

  // The body to give the runner: opens, in order, the annotations of the run being replayed.
  Body body();

  std::vector<MetricSpec> metrics() const override { return metrics_; }
  bool observes_kernels() const override { return per_kernel_; }
  SessionInfo describe() const override { return info_; }
  void begin_session(const Settings&) override { next_ = 0; }
  void end_session() noexcept override {}
  void begin_run() override;
  void flush_cache() override {}
  void region_begin(std::size_t) override {}
  void region_end(std::size_t) override {}
  std::vector<std::vector<KernelMeasurement>> collect_run(std::size_t region_count) override;
  void abandon_run() noexcept override {}
  DeviceControl* device_control() override { return &device_; }

 private:
  const ManifestRun& current(std::size_t config) const;

  std::vector<MetricSpec> metrics_;
  bool per_kernel_;
  SessionInfo info_;
  ChildManifest manifest_;
  std::vector<RunKernels> kernels_;
  std::size_t next_ = 0;  // manifest runs replayed so far (the current one is next_ - 1)
  ReplayDevice device_;
};

}  // namespace kscope::ncu

#pragma once
// The backend of the profiled session inside the child process that ncu runs. It measures nothing:
// it opens one NVTX push/pop range per region of every recorded run (domain "kscope", named by
// range_name()) for ncu to profile, leaves warm-up runs unmarked so ncu skips them, leaves cache
// flushing to ncu (--cache-control), and records the regions of each run for the manifest.
// Its values are NaN placeholders: the parent takes the numbers from ncu's report.
#include <cstddef>
#include <string>
#include <vector>

#include "backends/ncu/child_manifest.hpp"
#include "kscope/measurement_backend.hpp"
#include "kscope/profile.hpp"

namespace kscope::ncu {

class ChildBackend final : public MeasurementBackend {
 public:
  ChildBackend(std::vector<std::string> metrics, std::size_t warmup_runs);

  // `body` preceded by telling this backend which config the run belongs to.
  Body wrap(const Body& body);
  const ChildManifest& manifest() const { return manifest_; }

  std::vector<MetricSpec> metrics() const override;
  bool observes_kernels() const override { return false; }
  SessionInfo describe() const override;
  void begin_session(const Settings&) override {}
  void end_session() noexcept override {}
  void begin_run() override {}
  void flush_cache() override {}
  void region_begin(std::size_t region) override;
  void region_end(std::size_t region) override;
  std::vector<std::vector<KernelMeasurement>> collect_run(std::size_t region_count) override;
  void abandon_run() noexcept override;

 private:
  void start_body(std::size_t config);
  bool recorded() const { return run_in_config_ >= warmup_runs_; }

  std::vector<std::string> metrics_;
  std::size_t warmup_runs_;
  std::size_t config_ = static_cast<std::size_t>(-1);
  std::size_t run_in_config_ = 0;  // warm-ups included
  bool range_open_ = false;
  ChildManifest manifest_;
};

}  // namespace kscope::ncu

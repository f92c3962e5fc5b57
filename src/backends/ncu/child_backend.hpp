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

namespace kscope::ncu {

class ChildBackend final : public MeasurementBackend {
 public:
  explicit ChildBackend(std::vector<std::string> metrics);

  const ChildManifest& manifest() const { return manifest_; }

  std::vector<MetricSpec> metrics() const override;
  SessionInfo describe() const override;
  void begin_session(const Settings&) override {}
  void end_session() noexcept override {}
  void flush_cache() override {}
  void region_begin(const RegionContext& region) override;
  void region_end(const RegionContext& region) override;
  void end_run(const RunContext& run, const std::vector<RegionRecord>& regions) override;
  std::vector<RunMeasurement> collect_batch() override;
  void abandon_run(const RunContext& run) noexcept override;

 private:
  void pop_range() noexcept;

  std::vector<std::string> metrics_;
  bool range_open_ = false;
  std::size_t region_count_ = 0;  // of the run collected next
  ChildManifest manifest_;
};

}  // namespace kscope::ncu

#pragma once
// The regions of the run in progress. Annotations reach it through active_recorder(); the runner
// owns it. Regions are process-wide (not per thread), so kernels launched by worker threads inside
// a region are attributed to it, and at most one region is open at a time.
#include <cstddef>
#include <mutex>
#include <string>
#include <vector>

#include "kscope/measurement_backend.hpp"

namespace kscope::detail {

// The regions one run opened, in order: kept with the run until its measurements are collected.
struct RunRegions {
  std::vector<std::string> names;
  std::vector<bool> failed;
  std::vector<std::string> reasons;  // why a failed region failed (ignore_failures)

  std::size_t count() const { return names.size(); }
};

class RunRecorder {
 public:
  RunRecorder(MeasurementBackend& backend, bool flush_before_regions);

  void begin_run();
  std::size_t open(const std::string& name);  // throws AnnotationError (nesting, repeated name)
  void close(std::size_t region);
  void mark_failed(std::size_t region, const std::string& reason);

  // The run in progress (call from the runner's thread, between runs or after the body returned).
  const RunRegions& regions() const { return run_; }
  std::size_t region_count() const { return run_.count(); }
  const std::vector<std::string>& names() const { return run_.names; }

 private:
  std::mutex mutex_;
  MeasurementBackend& backend_;
  bool flush_;
  RunRegions run_;
  std::ptrdiff_t open_ = -1;
};

// The recorder of the profile() call in progress, or nullptr outside profiling.
RunRecorder* active_recorder();

// Installs a recorder for the duration of one profile() call; a second, nested profile() is refused.
class ActiveRecorderScope {
 public:
  explicit ActiveRecorderScope(RunRecorder& recorder);
  ~ActiveRecorderScope();
  ActiveRecorderScope(const ActiveRecorderScope&) = delete;
  ActiveRecorderScope& operator=(const ActiveRecorderScope&) = delete;
};

}  // namespace kscope::detail

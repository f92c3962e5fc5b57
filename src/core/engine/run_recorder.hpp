#pragma once
// The regions of the run in progress. Annotations reach it through active_recorder(); the session
// owns it. Regions are process-wide (not per thread), so kernels launched by worker threads inside
// a region are attributed to it, and at most one region is open at a time.
//
// Closing a region happens in ~Annotation, which must not throw: an error the backend raises
// there is kept and thrown by end_run(), naming the region, once the body has returned.
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "kscope/annotation.hpp"
#include "kscope/detail/annotation_access.hpp"  // for the language bindings
#include "kscope/measurement_backend.hpp"

namespace kscope::detail {

// Thrown by RunRecorder::end_run when the backend failed while a region closed.
struct RegionCloseError {
  std::string region;
  std::exception_ptr cause;
};

class RunRecorder {
 public:
  RunRecorder(MeasurementBackend& backend, bool flush_before_regions);

  // Called as each region opens, before the flush and the backend (the session's annotation-scope
  // info collectors); what it throws leaves the region unopened and reaches the annotation.
  void on_open(std::function<void(std::size_t region, const std::string& name)> hook) { on_open_ = std::move(hook); }

  // A run (or another pass of it) starts; its regions start empty.
  void begin_run(const RunContext& run);
  // Throws AnnotationUseError (nesting, repeated name) and whatever the backend raises.
  std::size_t open(const std::string& name);
  // Identifies the body call in progress, process-wide: close and mark_failed from an annotation
  // opened in another call (one left open, closed later) do nothing.
  std::size_t run_serial() const { return serial_; }
  void close(std::size_t region, std::size_t run_serial) noexcept;
  void mark_failed(std::size_t region, std::size_t run_serial, const std::string& reason);
  // Closes a region whose owner was destroyed without closing it (Python collected an annotate
  // object entered and never exited): end_run() then fails the run with AnnotationUseError(why).
  void abandon(std::size_t region, std::size_t run_serial, const std::string& why) noexcept;
  // After the body returned: throws AnnotationUseError for a region abandoned or still open, or
  // RegionCloseError for a region that failed to close.
  void end_run();

  // The run in progress (read between runs or after the body returned).
  const std::vector<RegionRecord>& regions() const { return regions_; }
  // Where the session is: the run in progress, as it began it.
  RunContext run();
  // evaluate(): the open region's call returned. Tells the backend's call observer (which must
  // exist), which marks the point the caller's stream has reached.
  void call_returned(std::uintptr_t stream);

 private:
  std::mutex mutex_;  // regions_ and open_: annotations may come from any thread
  MeasurementBackend& backend_;
  bool flush_;
  RunContext run_;
  std::vector<RegionRecord> regions_;
  std::ptrdiff_t open_ = -1;
  std::size_t serial_ = 0;
  RegionCloseError close_error_;
  std::string abandoned_;  // why a region was abandoned in this run; empty if none was
  std::function<void(std::size_t, const std::string&)> on_open_;
};

// The recorder of the session in progress, or nullptr outside profiling.
RunRecorder* active_recorder();

// Makes `recorder` the one annotations reach, for its lifetime. Only inside a SessionGuard.
class RecorderScope {
 public:
  explicit RecorderScope(RunRecorder& recorder);
  ~RecorderScope();
  RecorderScope(const RecorderScope&) = delete;
  RecorderScope& operator=(const RecorderScope&) = delete;
};

}  // namespace kscope::detail

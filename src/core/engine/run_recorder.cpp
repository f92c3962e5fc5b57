#include "core/engine/run_recorder.hpp"

#include <algorithm>
#include <atomic>
#include <utility>

#include "base/text.hpp"
#include "kscope/errors.hpp"

namespace kscope::detail {
namespace {
std::atomic<RunRecorder*> g_recorder{nullptr};
std::atomic<std::size_t> g_runs{0};  // body calls of every session so far
}

RunRecorder::RunRecorder(MeasurementBackend& backend, bool flush_before_regions)
    : backend_(backend), flush_(flush_before_regions) {}

void RunRecorder::begin_run(const RunContext& run) {
  std::lock_guard lock(mutex_);
  run_ = run;
  serial_ = ++g_runs;
  regions_.clear();
  open_ = -1;
  close_error_ = {};
  abandoned_.clear();
}

std::size_t RunRecorder::open(const std::string& name) {
  std::size_t region = 0;
  {
    std::lock_guard lock(mutex_);
    if (open_ >= 0) {
      // Nsight Python's sentences first (its users match on them), then what to do.
      throw AnnotationUseError("Nested annotations are not supported. Cannot enter annotation '" + cut(name) +
                               "' while another annotation is active ('" +
                               cut(regions_[static_cast<std::size_t>(open_)].name) +
                               "' is open): close the outer one first or merge the two regions");
    }
    if (std::any_of(regions_.begin(), regions_.end(), [&](const RegionRecord& r) { return r.name == name; })) {
      throw AnnotationUseError("Annotation name '" + cut(name) +
                               "' has already been used in this profiling run. Each annotation must have a unique "
                               "name: give the second region another name (a name may repeat across runs, not "
                               "within one)");
    }
    regions_.push_back({name, false, ""});
    region = regions_.size() - 1;
    open_ = static_cast<std::ptrdiff_t>(region);
  }
  // The backend is called without the lock: it may wait for the GPU, and launching threads must not.
  try {
    if (on_open_) on_open_(region, regions_[region].name);
    // The flush goes before the region opens, so its work is never attributed or timed.
    if (flush_) backend_.flush_cache();
    backend_.region_begin({run_, region, regions_[region].name});
  } catch (...) {
    std::lock_guard lock(mutex_);
    open_ = -1;
    throw;
  }
  return region;
}

void RunRecorder::close(std::size_t region, std::size_t run_serial) noexcept {
  {
    std::lock_guard lock(mutex_);
    if (run_serial != serial_ || open_ != static_cast<std::ptrdiff_t>(region)) return;
    open_ = -1;
  }
  try {
    backend_.region_end({run_, region, regions_[region].name});
  } catch (...) {
    std::lock_guard lock(mutex_);
    if (!close_error_.cause) close_error_ = {regions_[region].name, std::current_exception()};
  }
}

RunContext RunRecorder::run() {
  std::lock_guard lock(mutex_);
  return run_;
}

void RunRecorder::call_returned(std::uintptr_t stream) {
  std::size_t region = 0;
  {
    std::lock_guard lock(mutex_);
    if (open_ < 0) throw InternalError("call_returned outside a region (kscope bug: please report it with this message)");
    region = static_cast<std::size_t>(open_);
  }
  CallObserver* observer = backend_.call_observer();
  if (!observer)
    throw InternalError("call_returned on a backend without a call observer (kscope bug: please report it with this "
                        "message)");
  observer->call_returned({run_, region, regions_[region].name}, stream);
}

void RunRecorder::abandon(std::size_t region, std::size_t run_serial, const std::string& why) noexcept {
  {
    std::lock_guard lock(mutex_);
    if (run_serial != serial_ || open_ != static_cast<std::ptrdiff_t>(region)) return;
    if (abandoned_.empty()) abandoned_ = why;
  }
  close(region, run_serial);
}

void RunRecorder::mark_failed(std::size_t region, std::size_t run_serial, const std::string& reason) {
  std::lock_guard lock(mutex_);
  if (run_serial != serial_) return;
  regions_[region].failed = true;
  regions_[region].reason = reason;
}

void RunRecorder::end_run() {
  std::lock_guard lock(mutex_);
  if (!abandoned_.empty()) throw AnnotationUseError(std::exchange(abandoned_, {}));
  if (close_error_.cause) throw std::exchange(close_error_, {});
  if (open_ >= 0) {
    const std::string name = regions_[static_cast<std::size_t>(open_)].name;
    open_ = -1;
    throw AnnotationUseError("annotation '" + cut(name) +
                             "' was still open when the body returned: every annotation must be closed inside "
                             "the body (use it as a scope or a 'with' block)");
  }
}

RunRecorder* active_recorder() { return g_recorder.load(std::memory_order_acquire); }

RecorderScope::RecorderScope(RunRecorder& recorder) { g_recorder.store(&recorder, std::memory_order_release); }

RecorderScope::~RecorderScope() { g_recorder.store(nullptr, std::memory_order_release); }

}  // namespace kscope::detail

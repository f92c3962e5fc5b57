#include "core/session.hpp"

#include <algorithm>
#include <atomic>

#include "kscope/errors.hpp"

namespace kscope::detail {
namespace {
std::atomic<RunRecorder*> g_active{nullptr};
}

RunRecorder::RunRecorder(MeasurementBackend& backend, bool flush_before_regions)
    : backend_(backend), flush_(flush_before_regions) {}

void RunRecorder::begin_run() {
  std::lock_guard lock(mutex_);
  run_ = RunRegions{};
  open_ = -1;
}

std::size_t RunRecorder::open(const std::string& name) {
  std::lock_guard lock(mutex_);
  if (open_ >= 0) {
    throw AnnotationError("annotation '" + name + "' was opened while annotation '" +
                          run_.names[static_cast<std::size_t>(open_)] +
                          "' is still open; annotations cannot be nested: close the outer one first "
                          "or merge the two regions");
  }
  if (std::find(run_.names.begin(), run_.names.end(), name) != run_.names.end()) {
    throw AnnotationError("annotation '" + name +
                          "' was used twice in one run; each annotation name must be unique within "
                          "a run (give the second region another name)");
  }
  run_.names.push_back(name);
  run_.failed.push_back(false);
  run_.reasons.emplace_back();
  const std::size_t region = run_.count() - 1;
  // The flush goes before the region opens, so its work is never attributed or timed.
  if (flush_) backend_.flush_cache();
  backend_.region_begin(region);
  open_ = static_cast<std::ptrdiff_t>(region);
  return region;
}

void RunRecorder::close(std::size_t region) {
  std::lock_guard lock(mutex_);
  if (open_ != static_cast<std::ptrdiff_t>(region)) return;
  backend_.region_end(region);
  open_ = -1;
}

void RunRecorder::mark_failed(std::size_t region, const std::string& reason) {
  std::lock_guard lock(mutex_);
  run_.failed[region] = true;
  run_.reasons[region] = reason;
}

RunRecorder* active_recorder() { return g_active.load(std::memory_order_acquire); }

ActiveRecorderScope::ActiveRecorderScope(RunRecorder& recorder) {
  RunRecorder* expected = nullptr;
  if (!g_active.compare_exchange_strong(expected, &recorder)) {
    throw ConfigError("profile() was called while another profile() is running (from the body or "
                      "another thread); profile sessions cannot be nested or run concurrently");
  }
}

ActiveRecorderScope::~ActiveRecorderScope() { g_active.store(nullptr, std::memory_order_release); }

}  // namespace kscope::detail

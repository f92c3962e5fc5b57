#include "core/engine/first_work.hpp"

#include <utility>

namespace kscope::detail {

void FirstWork::arm(Event start, Event probe) {
  std::lock_guard lock(mutex_);
  start_ = start;
  probe_ = probe;
  owner_ = std::this_thread::get_id();
  seen_.reset();
  armed_ = true;
}

void FirstWork::before_call(Stream stream, const char* call) {
  if (!armed_) return;
  std::lock_guard lock(mutex_);
  // A call captured into a graph runs nothing now: its graph's launch is the work.
  if (!armed_ || ops_.capturing(stream)) return;
  armed_ = false;
  // Asked before the probe is recorded: the start event completed before this call was enqueued.
  Seen seen{ops_.completed(start_), call ? call : "a launch"};
  ops_.record(probe_, stream);
  seen.call += stream == 0                    ? " on the default stream"
               : ops_.follows_legacy(stream) ? " on a blocking stream"
                                             : " on a non-blocking stream";
  if (std::this_thread::get_id() != owner_) seen.call += ", from another thread";
  seen_ = std::move(seen);
}

std::optional<FirstWork::Seen> FirstWork::disarm() {
  std::lock_guard lock(mutex_);
  armed_ = false;
  return std::exchange(seen_, std::nullopt);
}

}  // namespace kscope::detail

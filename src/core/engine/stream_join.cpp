#include "core/engine/stream_join.hpp"

namespace kscope::detail {

StreamJoin::~StreamJoin() {
  for (const auto& [stream, known] : streams_)
    if (known.event) ops_.destroy_event(*known.event);
  for (Event e : destroyed_) ops_.destroy_event(e);
  for (Event e : free_) ops_.destroy_event(e);
  if (legacy_point_) ops_.destroy_event(*legacy_point_);
}

StreamJoin::Event StreamJoin::take_event() {
  if (free_.empty()) return ops_.make_event();
  const Event e = free_.back();
  free_.pop_back();
  return e;
}

void StreamJoin::before_call(Stream stream) {
  std::lock_guard lock(mutex_);
  auto it = streams_.find(stream);
  const bool added = it == streams_.end();
  if (added) {
    // A stream being captured is asked nothing more (its flags among them) until its capture ends.
    if (ops_.capturing(stream)) return;
    it = streams_.emplace(stream, Known{}).first;
    it->second.follows_legacy = ops_.follows_legacy(stream);
    unordered_seen_ += !it->second.follows_legacy;
  }
  Known& known = it->second;
  if (known.follows_legacy) return;
  const bool must_wait = (gate_ || gate_pending_) && !known.gated;
  if ((known.pending && !must_wait) || (!added && ops_.capturing(stream))) return;
  // The event is made on the launching thread, whose context is the stream's.
  if (!known.event) known.event = take_event();
  if (must_wait) {
    if (gate_pending_) record_legacy_point();
    ops_.wait(stream, *gate_);
    known.gated = true;
  }
  known.pending = true;
}

void StreamJoin::stream_destroyed(Stream stream) {
  std::lock_guard lock(mutex_);
  const auto it = streams_.find(stream);
  if (it == streams_.end()) return;
  if (const std::optional<Event> event = it->second.event) {
    if (it->second.pending && !ops_.capturing(stream)) {
      ops_.record(*event, stream);
      destroyed_.push_back(*event);
    } else {
      free_.push_back(*event);
    }
  }
  streams_.erase(it);  // a stream made later with the same handle is asked afresh
}

void StreamJoin::gate(Event event) {
  std::lock_guard lock(mutex_);
  gate_ = event;
  gate_pending_ = false;
  for (auto& [stream, known] : streams_) known.gated = false;
}

void StreamJoin::gate_after_legacy() {
  std::lock_guard lock(mutex_);
  gate_.reset();
  gate_pending_ = true;
  if (unordered_seen_ > 0) record_legacy_point();
  for (auto& [stream, known] : streams_) known.gated = false;
}

void StreamJoin::record_legacy_point() {
  if (!legacy_point_) legacy_point_ = ops_.make_event();
  ops_.record(*legacy_point_, 0);
  gate_ = legacy_point_;
  gate_pending_ = false;
}

void StreamJoin::ungate() {
  std::lock_guard lock(mutex_);
  gate_.reset();
  gate_pending_ = false;
}

void StreamJoin::join() {
  std::lock_guard lock(mutex_);
  for (auto& [stream, known] : streams_) {
    if (!known.pending) continue;
    known.pending = false;
    if (ops_.capturing(stream)) continue;  // began a capture since: recording now would join it to the graph
    ops_.record(*known.event, stream);
    ops_.wait(0, *known.event);
  }
  for (Event e : destroyed_) {
    ops_.wait(0, e);
    free_.push_back(e);
  }
  destroyed_.clear();
}

std::size_t StreamJoin::unordered_streams_seen() const {
  std::lock_guard lock(mutex_);
  return unordered_seen_;
}

}  // namespace kscope::detail

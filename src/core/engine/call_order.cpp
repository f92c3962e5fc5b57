#include "core/engine/call_order.hpp"

#include <algorithm>
#include <atomic>

namespace kscope::detail {
namespace {

// Above every real stream handle (a pointer) and below nothing a driver hands out.
constexpr CallOrder::Stream kPerThreadKeys = CallOrder::Stream(1) << 63;

bool per_thread(CallOrder::Stream stream) { return (stream & kPerThreadKeys) != 0; }

}  // namespace

CallOrder::Stream CallOrder::per_thread_stream() {
  static std::atomic<Stream> next{0};
  thread_local const Stream mine = kPerThreadKeys | next.fetch_add(1);
  return mine;
}

void CallOrder::reset() {
  std::lock_guard lock(mutex_);
  streams_.clear();
  events_.clear();
  host_.clear();
  in_call_ = false;
  call_.clear();
}

void CallOrder::begin_call() {
  std::lock_guard lock(mutex_);
  in_call_ = true;
  call_.clear();
}

CallOrder::Known& CallOrder::known(Stream stream) {
  // Asked once, as it is first named: the stream is in use then (it may be destroyed later).
  const auto [it, added] = streams_.try_emplace(stream);
  if (added && stream != 0 && !per_thread(stream)) it->second.follows_legacy = ops_.follows_legacy(stream);
  return it->second;
}

bool CallOrder::follows_legacy(Stream stream) { return known(stream).follows_legacy; }

void CallOrder::merge(Clock& into, const Clock& from) {
  for (const auto& [stream, count] : from) {
    std::uint64_t& mine = into[stream];
    mine = std::max(mine, count);
  }
}

CallOrder::Clock CallOrder::point(Stream stream) {
  Known& k = known(stream);
  Clock p = k.after;
  std::uint64_t& own = p[stream];
  own = std::max(own, k.count);
  return p;
}

void CallOrder::implicit_order(Stream stream) {
  // Work on the legacy stream waits for the blocking streams' work before it; work on a blocking
  // stream for the legacy stream's.
  if (stream == 0) {
    std::vector<Stream> blocking;
    for (const auto& [s, k] : streams_)
      if (s != 0 && follows_legacy(s)) blocking.push_back(s);
    for (Stream s : blocking) {
      const Clock p = point(s);
      merge(known(0).after, p);
    }
  } else if (follows_legacy(stream)) {
    const Clock p = point(0);
    merge(known(stream).after, p);
  }
}

void CallOrder::enqueued(Stream stream, Id id) {
  std::lock_guard lock(mutex_);
  implicit_order(stream);
  const std::uint64_t count = ++known(stream).count;
  if (in_call_) call_.push_back({stream, count, id});
}

void CallOrder::recorded(Event event, Stream stream) {
  std::lock_guard lock(mutex_);
  implicit_order(stream);
  events_[event] = point(stream);
}

void CallOrder::waited(Stream stream, Event event) {
  std::lock_guard lock(mutex_);
  const auto it = events_.find(event);
  if (it == events_.end()) return;  // recorded before the session: it orders none of the call's work
  const Clock p = it->second;
  merge(known(stream).after, p);
}

void CallOrder::host_waited(Stream stream) {
  std::lock_guard lock(mutex_);
  implicit_order(stream);
  merge(host_, point(stream));
}

void CallOrder::host_waited_for(Event event) {
  std::lock_guard lock(mutex_);
  const auto it = events_.find(event);
  if (it != events_.end()) merge(host_, it->second);
}

void CallOrder::host_waited_all() {
  std::lock_guard lock(mutex_);
  std::vector<Stream> all;
  for (const auto& [s, k] : streams_) all.push_back(s);
  for (Stream s : all) merge(host_, point(s));
}

std::vector<CallOrder::Id> CallOrder::unjoined(Stream caller) {
  std::lock_guard lock(mutex_);
  implicit_order(caller);  // what kscope's marker on the caller's stream would wait for
  const Clock reached = point(caller);
  std::vector<Id> out;
  for (const Work& w : call_) {
    if (w.stream == caller) continue;
    const auto by_stream = reached.find(w.stream);
    const auto by_host = host_.find(w.stream);
    const bool joined = (by_stream != reached.end() && by_stream->second >= w.count) ||
                        (by_host != host_.end() && by_host->second >= w.count);
    if (!joined) out.push_back(w.id);
  }
  in_call_ = false;
  call_.clear();
  return out;
}

}  // namespace kscope::detail

#pragma once
// Whether the GPU waited for the host before a region's first work, for a backend that times the
// region from the host's side (the events backend: an event recorded on the default stream as the
// region opens). Its value includes every moment between that event and the region's end; when the
// host enqueues the first kernel, copy or fill only after the GPU has reached the start event, the
// GPU idles in between and the value holds the host's time: Python's slow enqueue on a side stream,
// a graph's launch, a thread starting, nothing ahead of the start event (no L2 flush) to hide it.
// On the default stream an L2 flush enqueued before the start event usually hides it; on a side
// stream or another thread nothing does. FirstWork catches it call by call: the first call of the
// region (any stream, any thread) records a timed probe event on its stream just before it is
// enqueued (after StreamJoin's wait for the gate), and asks whether the start event has already
// completed. The backend reads elapsed(start, probe): the GPU's wait, as it stands in the value.
#include <atomic>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "core/engine/stream_join.hpp"

namespace kscope::detail {

class FirstWork {
 public:
  using Stream = StreamOps::Stream;
  using Event = StreamOps::Event;

  explicit FirstWork(StreamOps& ops) : ops_(ops) {}

  // What the region's first call was, once the region closes.
  struct Seen {
    bool gpu_waited = false;  // the start event had completed when the call was made
    std::string call;         // "cuLaunchKernel on a non-blocking stream, from another thread"
  };

  // On the region's thread once `start` is recorded: the region's first call records `probe` (an
  // event made with timing) on its stream.
  void arm(Event start, Event probe);
  // From any thread, just before a kernel launch, graph launch, copy or fill named `call` is
  // enqueued on `stream` (0: the legacy default stream), after StreamJoin::before_call.
  void before_call(Stream stream, const char* call);
  // On the region's thread as it closes: the first call, if the region made one.
  std::optional<Seen> disarm();

 private:
  StreamOps& ops_;
  std::mutex mutex_;  // calls come from any thread
  // Read without the lock first: every launch of the process passes here, armed or not.
  std::atomic<bool> armed_ = false;
  Event start_ = 0, probe_ = 0;
  std::thread::id owner_;
  std::optional<Seen> seen_;
};

}  // namespace kscope::detail

#pragma once
// Which of a measured call's kernels, copies and fills the caller's stream was ordered after when
// the call returned: happens-before over streams, kept from the calls that order them (event
// records and waits, the legacy stream's implicit order with blocking streams) and from the host's
// waits (stream, event and context synchronizations, queries that found the work done). Work the
// caller's stream did not wait for, nor the host, is unjoined: a timer on the caller's stream would
// have stopped before it ends. Unlike the stream marker's start (which a slow host makes late, after
// short unjoined work has ended), this does not depend on when the host returns. The cupti backend
// feeds it from CUPTI's driver callbacks, the simulated backend from its simulated streams.
#include <cstdint>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "core/engine/stream_join.hpp"

namespace kscope::detail {

class CallOrder {
 public:
  using Stream = StreamOps::Stream;  // 0: the legacy default stream
  using Event = StreamOps::Event;
  using Id = std::uint64_t;  // the backend's name for one kernel, copy or fill (a correlation id)

  // Each thread's own default stream (the per-thread default stream) under a key of its own: it
  // follows the legacy stream.
  static Stream per_thread_stream();

  explicit CallOrder(StreamOps& ops) : ops_(ops) {}

  void reset();       // a new session: nothing known
  void begin_call();  // the work enqueued from now on is the measured call's
  // Work (a kernel, a graph, a copy or a fill) enqueued on `stream`.
  void enqueued(Stream stream, Id id);
  void recorded(Event event, Stream stream);  // an event recorded on `stream`
  void waited(Stream stream, Event event);    // `stream`'s later work waits for the event
  void host_waited(Stream stream);            // the host waited for the stream's work so far
  void host_waited_for(Event event);          // the host waited for the event
  void host_waited_all();                     // the host waited for the whole context
  // The call returned on `caller` (its stream): the call's work that stream was not ordered after
  // and the host did not wait for. The call's work ends here.
  std::vector<Id> unjoined(Stream caller);

 private:
  using Clock = std::unordered_map<Stream, std::uint64_t>;  // per stream: its work up to this count is before
  struct Known {
    std::uint64_t count = 0;  // work enqueued on it
    Clock after;              // what its next work is ordered after
    bool follows_legacy = true;
  };
  struct Work {
    Stream stream;
    std::uint64_t count;
    Id id;
  };
  Known& known(Stream stream);
  bool follows_legacy(Stream stream);
  Clock point(Stream stream);        // what the stream's work so far is ordered after, itself included
  void implicit_order(Stream stream);  // the legacy stream's order with blocking streams, for work on `stream`
  static void merge(Clock& into, const Clock& from);

  StreamOps& ops_;
  std::mutex mutex_;  // calls come from any thread
  std::unordered_map<Stream, Known> streams_;
  std::unordered_map<Event, Clock> events_;
  Clock host_;  // what the host has waited for
  bool in_call_ = false;
  std::vector<Work> call_;
};

}  // namespace kscope::detail

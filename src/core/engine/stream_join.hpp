#pragma once
// Keeps what a backend puts on the legacy default stream (the L2 flush, the events backend's region
// events) in order with a region's work on streams that do not wait for the legacy stream: streams
// created with cudaStreamNonBlocking (PyTorch's side streams, NCCL's), launched on from any thread.
// The legacy stream, the per-thread default streams and blocking streams already wait for it and it
// for them; those never reach StreamJoin. On the GPU, without a host wait:
//   gate(e)   the first kernel, copy or fill on each such stream from then on waits for event e
//             (the region's start event);
//   gate_after_legacy()   the same for the legacy stream's work so far (the flush), with an
//             event of its own recorded on the legacy stream only once such a stream has been
//             seen: a program that only uses streams that follow the legacy one pays nothing;
//   join()    the legacy stream waits for everything enqueued so far on each such stream called
//             since the last join (before the next flush, before the region's stop event).
// A stream being captured into a graph runs nothing now and is left alone (its graph's launch is a
// call like any other). The backends drive it from CUPTI's driver callbacks (backends/stream_order.*);
// the simulated backend from its simulated streams, so the engine's ordering is tested on the CPU.
#include <cstdint>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <vector>

namespace kscope::detail {

// What StreamJoin does to streams and events: CUDA's calls, or a simulated GPU's.
class StreamOps {
 public:
  using Stream = std::uintptr_t;  // 0: the legacy default stream
  using Event = std::uintptr_t;

  virtual ~StreamOps() = default;
  // The stream waits for the legacy stream's earlier work and the legacy stream for its (created
  // without cudaStreamNonBlocking). A stream that cannot be asked counts as following it.
  virtual bool follows_legacy(Stream stream) = 0;
  // Its calls are captured into a graph now (or the stream cannot be asked): nothing is done to it.
  virtual bool capturing(Stream stream) = 0;
  virtual Event make_event() = 0;
  virtual void destroy_event(Event event) noexcept = 0;
  virtual void record(Event event, Stream stream) = 0;  // the event completes after the stream's work so far
  virtual void wait(Stream stream, Event event) = 0;    // the stream's later work waits for the event
  // The event's work has completed on the GPU (the GPU has reached it); an event never recorded has.
  virtual bool completed(Event event) = 0;
};

class StreamJoin {
 public:
  using Stream = StreamOps::Stream;
  using Event = StreamOps::Event;

  explicit StreamJoin(StreamOps& ops) : ops_(ops) {}
  ~StreamJoin();
  StreamJoin(const StreamJoin&) = delete;
  StreamJoin& operator=(const StreamJoin&) = delete;

  // From any thread, just before a kernel launch, graph launch, copy or fill is enqueued on
  // `stream` (a real stream, never the legacy or a per-thread default stream).
  void before_call(Stream stream);
  // From any thread, just before `stream` is destroyed: what it still holds is joined at the next join().
  void stream_destroyed(Stream stream);
  // The first call on each stream that does not follow the legacy one waits for `event` (recorded) from now on.
  void gate(Event event);
  // The same for the legacy stream's work enqueued so far: an event is recorded on the legacy stream
  // now when such a stream has been seen, else at the first such stream's first call (a later point
  // of the legacy stream: still after its work now, only more conservative, once per StreamJoin).
  void gate_after_legacy();
  void ungate();  // from now on calls wait for nothing
  // The legacy stream waits for every stream that does not follow it, called on since the last join.
  void join();
  // Streams called on that do not follow the legacy stream, since the object was made.
  std::size_t unordered_streams_seen() const;

 private:
  struct Known {
    bool follows_legacy = true;
    bool gated = false;    // waited for the gate since it was set
    bool pending = false;  // called on since the last join
    std::optional<Event> event;  // recorded on it at the join
  };
  Event take_event();

  StreamOps& ops_;
  mutable std::mutex mutex_;  // calls come from any thread
  std::unordered_map<Stream, Known> streams_;
  void record_legacy_point();

  std::optional<Event> gate_;
  bool gate_pending_ = false;  // gate_after_legacy's event is still to be recorded (gate_ is empty)
  std::optional<Event> legacy_point_;  // gate_after_legacy's event, made at its first record
  std::vector<Event> destroyed_;  // recorded on streams destroyed before their join
  std::vector<Event> free_;       // made and not in use
  std::size_t unordered_seen_ = 0;
};

}  // namespace kscope::detail

#pragma once
// The cupti and events backends' StreamJoin (core/engine/stream_join.hpp) on CUDA: fed by CUPTI's driver
// callbacks for every kernel launch, graph launch, copy and fill of the measured context, from any
// thread, and for every stream's destruction; it waits and records with CUDA events on the GPU, so
// that neither backend makes the host wait for a stream it does not know. The same calls feed the
// events backend's FirstWork (core/engine/first_work.hpp): whether the GPU waited for the host before a
// region's first work.
#include <cupti.h>

#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "core/engine/call_order.hpp"
#include "core/engine/first_work.hpp"
#include "core/engine/stream_join.hpp"

namespace kscope::cupti {

// StreamOps on the CUDA runtime: events without timing, waits and records on the GPU.
class CudaStreamOps final : public detail::StreamOps {
 public:
  bool follows_legacy(Stream stream) override;
  bool capturing(Stream stream) override;
  Event make_event() override;
  void destroy_event(Event event) noexcept override;
  void record(Event event, Stream stream) override;
  void wait(Stream stream, Event event) override;
  bool completed(Event event) override;
};

class StreamOrder {
 public:
  StreamOrder() = default;
  StreamOrder(const StreamOrder&) = delete;
  StreamOrder& operator=(const StreamOrder&) = delete;

  // The driver calls it needs callbacks for: launches (the deprecated ones too), copies, fills and
  // stream destruction.
  static const std::vector<CUpti_CallbackId>& callbacks();
  // Those that order streams without enqueuing work (event records and waits, the host's
  // synchronizations and queries): the call order's, while calls are observed.
  static const std::vector<CUpti_CallbackId>& ordering_callbacks();
  static bool orders_only(CUpti_CallbackId cbid);

  // Before the session's first call: the context whose calls it orders is the current one.
  // `observe_calls`: the call order (core/engine/call_order.hpp) is kept too.
  void begin_session(bool observe_calls = false);
  // From CUPTI's driver-API callback on any thread; never throws (a failure is kept for check()).
  // `capturing`: a stream capture is open, whose calls run nothing now.
  void on_driver_call(CUpti_CallbackId cbid, const CUpti_CallbackData& call, bool capturing = false) noexcept;

  // The measured call begins; it returned on `caller_stream` (0: the legacy default stream, as
  // evaluate() gives it): the correlation ids of its work that stream was not ordered after.
  void begin_call() { calls_.begin_call(); }
  std::vector<detail::CallOrder::Id> unjoined(std::uintptr_t caller_stream);

  // On the session's thread (each throws CudaError for a failure of its own, or one kept from a callback).
  void gate(cudaEvent_t event);  // a recorded event
  void gate_after_flush();       // the legacy stream's work so far (the L2 flush just enqueued)
  void ungate() { join_.ungate(); }
  void join();
  void check();
  // The region's first call from now on records `probe` (an event with timing) on its stream.
  void arm_first_work(cudaEvent_t start, cudaEvent_t probe);
  std::optional<detail::FirstWork::Seen> first_work() { return first_.disarm(); }  // and disarms

 private:
  void on_ordering_call(CUpti_CallbackId cbid, const CUpti_CallbackData& call);

  CudaStreamOps ops_;
  detail::StreamJoin join_{ops_};
  detail::CallOrder calls_{ops_};
  bool observing_ = false;
  detail::FirstWork first_{ops_};
  CUcontext context_ = nullptr;
  std::mutex mutex_;
  std::string failure_;  // the first call a callback could not make
};

}  // namespace kscope::cupti

#include "backends/cupti/activity_tracer.hpp"

#include <cuda.h>

#include <algorithm>
#include <new>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "backends/cupti/memory_calls.hpp"
#include "backends/cupti_subscriber.hpp"
#include "device/cuda_check.hpp"
#include "kscope/errors.hpp"

namespace kscope::cupti {
namespace {

using device::check_cupti;

// Activity buffers handed to CUPTI and returned full; reused, so a session allocates nothing
// once the pool holds as many buffers as CUPTI keeps in flight (one per launching thread).
class BufferPool {
 public:
  static constexpr std::size_t kBytes = 4 << 20;  // CUPTI recommends 1-10 MB
  static constexpr std::align_val_t kAlign{8};    // CUPTI requires 8-byte alignment

  std::uint8_t* take() {
    std::lock_guard lock(mutex_);
    if (free_.empty()) return static_cast<std::uint8_t*>(::operator new(kBytes, kAlign));
    std::uint8_t* buffer = free_.back();
    free_.pop_back();
    return buffer;
  }
  void give_back(std::uint8_t* buffer) {
    std::lock_guard lock(mutex_);
    free_.push_back(buffer);
  }

 private:
  std::mutex mutex_;
  std::vector<std::uint8_t*> free_;
};

BufferPool& buffer_pool() {
  static auto* pool = new BufferPool;  // never destroyed, as the tracer
  return *pool;
}

// The activity kinds a session enables; those after the first only while calls are observed.
constexpr CUpti_ActivityKind kKernelKind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
constexpr CUpti_ActivityKind kMemoryKinds[] = {CUPTI_ACTIVITY_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_MEMCPY2,
                                               CUPTI_ACTIVITY_KIND_MEMSET};

// The driver calls that set what persisting-L2 lines follow: the set-aside (cuCtxSetLimit) and a
// stream's access-policy window. The runtime's cudaDeviceSetLimit and cudaStreamSetAttribute reach
// the driver through them, as its launches reach cuLaunchKernel.
constexpr CUpti_CallbackId kPersistingStateCallbacks[] = {
    CUPTI_DRIVER_TRACE_CBID_cuCtxSetLimit, CUPTI_DRIVER_TRACE_CBID_cuStreamSetAttribute,
    CUPTI_DRIVER_TRACE_CBID_cuStreamSetAttribute_ptsz, CUPTI_DRIVER_TRACE_CBID_cuStreamCopyAttributes,
    CUPTI_DRIVER_TRACE_CBID_cuStreamCopyAttributes_ptsz};

// Set on the thread that launches a stream marker while it does: the launch callback runs on the
// launching thread, so this tells the marker's launch from launches of other threads.
thread_local bool launching_marker = false;

constexpr std::int64_t kNoRegion = -1;
constexpr std::int64_t region_of(std::int64_t state) { return state < 0 ? kNoRegion : state / 2; }
constexpr bool returned_in(std::int64_t state) { return state >= 0 && state % 2 == 1; }

}  // namespace

ActivityTracer& ActivityTracer::instance() {
  static auto* tracer = new ActivityTracer;
  return *tracer;
}

void ActivityTracer::begin_session(bool observe_calls, StreamOrder& order) {
  std::lock_guard lock(session_mutex_);
  if (std::string fatal = fatal_error(); !fatal.empty()) throw BackendError(fatal_error_message(fatal));
  // The process's one CUPTI subscriber, shared with the counters backend, now calls us.
  subscriber_ = route_callbacks(&ActivityTracer::on_callback, this);
  if (!buffers_registered_) {
    check_cupti(cuptiActivityRegisterCallbacks(&ActivityTracer::on_buffer_requested,
                                               &ActivityTracer::on_buffer_completed),
                "cuptiActivityRegisterCallbacks");
    buffers_registered_ = true;
  }
  observing_calls_ = observe_calls;
  order_.store(&order, std::memory_order_release);
  try {
    // Every launch, copy, fill and stream destruction: the stream order's; the launches' records too.
    for (CUpti_CallbackId cbid : StreamOrder::callbacks())
      check_cupti(cuptiEnableCallback(1, subscriber_, CUPTI_CB_DOMAIN_DRIVER_API, cbid),
                  "cuptiEnableCallback(driver launch, copy, fill or stream destruction)");
    for (const auto& list : {std::span<const CUpti_CallbackId>(kCaptureBeginCallbacks), std::span<const CUpti_CallbackId>(kCaptureEndCallbacks)})
      for (CUpti_CallbackId cbid : list)
        check_cupti(cuptiEnableCallback(1, subscriber_, CUPTI_CB_DOMAIN_DRIVER_API, cbid),
                    "cuptiEnableCallback(stream capture)");
    if (observe_calls) {
      for (CUpti_CallbackId cbid : StreamOrder::ordering_callbacks())
        check_cupti(cuptiEnableCallback(1, subscriber_, CUPTI_CB_DOMAIN_DRIVER_API, cbid),
                    "cuptiEnableCallback(event record, stream wait or synchronization)");
      for (CUpti_CallbackId cbid : kPersistingStateCallbacks)
        check_cupti(cuptiEnableCallback(1, subscriber_, CUPTI_CB_DOMAIN_DRIVER_API, cbid),
                    "cuptiEnableCallback(persisting-L2 limit or stream attribute)");
      persisting_state_call_.store(true, std::memory_order_release);  // what came before: unknown
    }
    check_cupti(cuptiEnableCallback(1, subscriber_, CUPTI_CB_DOMAIN_STATE, CUPTI_CBID_STATE_FATAL_ERROR),
                "cuptiEnableCallback(state fatal error)");
    check_cupti(cuptiActivityEnable(kKernelKind), "cuptiActivityEnable(CONCURRENT_KERNEL)");
    if (observe_calls) {
      for (CUpti_ActivityKind kind : kMemoryKinds)
        check_cupti(cuptiActivityEnable(kind), "cuptiActivityEnable(MEMCPY, MEMCPY2, MEMSET)");
    }
  } catch (...) {
    quiet();
    throw;
  }
  clear();
}

void ActivityTracer::end_session() noexcept {
  std::lock_guard lock(session_mutex_);
  quiet();
}

// Disables everything a session enabled and drains the records still buffered, so that nothing
// runs on the user's launches between sessions.
void ActivityTracer::quiet() noexcept {
  set_region(kNoRegion);
  cuptiActivityDisable(kKernelKind);
  for (CUpti_CallbackId cbid : StreamOrder::callbacks())
    cuptiEnableCallback(0, subscriber_, CUPTI_CB_DOMAIN_DRIVER_API, cbid);
  for (CUpti_CallbackId cbid : StreamOrder::ordering_callbacks())
    cuptiEnableCallback(0, subscriber_, CUPTI_CB_DOMAIN_DRIVER_API, cbid);
  for (CUpti_CallbackId cbid : kPersistingStateCallbacks) cuptiEnableCallback(0, subscriber_, CUPTI_CB_DOMAIN_DRIVER_API, cbid);
  order_.store(nullptr, std::memory_order_release);
  for (const auto& list : {std::span<const CUpti_CallbackId>(kCaptureBeginCallbacks), std::span<const CUpti_CallbackId>(kCaptureEndCallbacks)})
    for (CUpti_CallbackId cbid : list) cuptiEnableCallback(0, subscriber_, CUPTI_CB_DOMAIN_DRIVER_API, cbid);
  captures_.store(0, std::memory_order_relaxed);
  if (observing_calls_)
    for (CUpti_ActivityKind kind : kMemoryKinds) cuptiActivityDisable(kind);
  cuptiEnableCallback(0, subscriber_, CUPTI_CB_DOMAIN_STATE, CUPTI_CBID_STATE_FATAL_ERROR);
  cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  clear();
}

void ActivityTracer::set_region(std::int64_t region) {
  if (StreamOrder* order = order_.load(std::memory_order_acquire); order && region >= 0) order->begin_call();
  region_state_.store(region < 0 ? kNoRegion : region * 2, std::memory_order_release);
}

void ActivityTracer::call_returned(std::int64_t region, std::uintptr_t caller_stream,
                                   const std::function<void()>& launch_marker) {
  region_state_.store(region * 2 + 1, std::memory_order_release);
  if (StreamOrder* order = order_.load(std::memory_order_acquire)) {
    const std::vector<std::uint64_t> unjoined = order->unjoined(caller_stream);
    std::lock_guard lock(mutex_);
    ledger_.unjoined(unjoined);
  }
  struct Marking {
    Marking() { launching_marker = true; }
    ~Marking() { launching_marker = false; }
  } marking;
  launch_marker();
}

void ActivityTracer::clear() {
  std::lock_guard lock(mutex_);
  ledger_.take();
  run_ = 0;
}

void ActivityTracer::end_run() {
  std::lock_guard lock(mutex_);
  ++run_;
}

void ActivityTracer::drop_run() {
  std::lock_guard lock(mutex_);
  ledger_.drop_run(run_);
}

RunTrace ActivityTracer::take_runs() {
  std::lock_guard lock(mutex_);
  RunTrace runs = ledger_.take();
  runs.fatal_error = fatal_error_;
  run_ = 0;
  return runs;
}

bool ActivityTracer::runs_complete() {
  std::lock_guard lock(mutex_);
  return ledger_.complete();
}

bool ActivityTracer::take_persisting_state_call() {
  return persisting_state_call_.exchange(false, std::memory_order_acq_rel);
}

std::string ActivityTracer::fatal_error() {
  std::lock_guard lock(mutex_);
  return fatal_error_;
}

void CUPTIAPI ActivityTracer::on_callback(void* userdata, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                                          const void* data) {
  auto& tracer = *static_cast<ActivityTracer*>(userdata);
  if (domain == CUPTI_CB_DOMAIN_STATE) {
    const auto* state = static_cast<const CUpti_StateData*>(data);
    const char* message = state->notification.message;
    std::lock_guard lock(tracer.mutex_);
    tracer.fatal_error_ = message ? message : "no details";
    return;
  }
  if (domain == CUPTI_CB_DOMAIN_DRIVER_API) tracer.on_driver_call(cbid, *static_cast<const CUpti_CallbackData*>(data));
}

void ActivityTracer::on_driver_call(CUpti_CallbackId cbid, const CUpti_CallbackData& call) {
  if (std::find(std::begin(kPersistingStateCallbacks), std::end(kPersistingStateCallbacks), cbid) !=
      std::end(kPersistingStateCallbacks)) {
    persisting_state_call_.store(true, std::memory_order_release);  // enqueues no work
    return;
  }
  if (StreamOrder* order = order_.load(std::memory_order_acquire))
    order->on_driver_call(cbid, call, captures_.load(std::memory_order_acquire) > 0);
  if (StreamOrder::orders_only(cbid)) return;  // enqueues no work
  if (const int step = capture_step(cbid)) {
    if (call.callbackSite == CUPTI_API_EXIT) count_capture(step, *static_cast<const CUresult*>(call.functionReturnValue));
    return;
  }
  // Copies, fills and the deprecated launches are traced only while calls are observed; a stream's
  // destruction never is.
  const bool traced = observing_calls_ ? cbid != CUPTI_DRIVER_TRACE_CBID_cuStreamDestroy &&
                                             cbid != CUPTI_DRIVER_TRACE_CBID_cuStreamDestroy_v2
                                       : std::find(std::begin(kLaunchCallbacks), std::end(kLaunchCallbacks), cbid) !=
                                             std::end(kLaunchCallbacks);
  if (!traced) return;
  if (call.callbackSite != CUPTI_API_ENTER) {
    if (*static_cast<const CUresult*>(call.functionReturnValue) != CUDA_SUCCESS) {
      // A failed call runs nothing; forget it rather than report a missing record.
      std::lock_guard lock(mutex_);
      ledger_.failed(call.correlationId);
    }
    return;
  }
  // The region open when the call is made owns what it causes: regions are process-wide.
  const std::int64_t state = region_state_.load(std::memory_order_acquire);
  if (state < 0) return;
  Call made{0, region_of(state)};
  if (launching_marker) {
    made.marker = true;
  } else if (const std::optional<Records> copy_or_fill = memory_call_records(cbid, call.functionParams)) {
    made.records = *copy_or_fill;
  } else {
    // A graph runs any number of kernels, copies and fills; a multi-device launch a kernel per device.
    const bool several = is_graph_launch(cbid) || cbid == CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernelMultiDevice;
    made.records = several ? Records::any : Records::one;
  }
  // Captured into a graph, it runs nothing now: no record, or (a launch on another stream) one.
  if (!made.marker && captures_.load(std::memory_order_acquire) > 0) made.records = Records::any;
  made.after_return = returned_in(state) && !made.marker;
  std::lock_guard lock(mutex_);
  made.run = run_;
  ledger_.called(call.correlationId, made);
}

void ActivityTracer::count_capture(int step, CUresult result) {
  if (step > 0) {
    if (result == CUDA_SUCCESS) captures_.fetch_add(1, std::memory_order_acq_rel);
    return;
  }
  // cuStreamEndCapture ends the capture even when it fails (an invalidated capture). One begun
  // before the session has no count to end.
  std::int32_t open = captures_.load(std::memory_order_acquire);
  while (open > 0 && !captures_.compare_exchange_weak(open, open - 1, std::memory_order_acq_rel)) {
  }
}

void CUPTIAPI ActivityTracer::on_buffer_requested(std::uint8_t** buffer, std::size_t* size,
                                                  std::size_t* max_records) {
  *buffer = buffer_pool().take();
  *size = BufferPool::kBytes;
  *max_records = 0;  // as many as fit
}

void CUPTIAPI ActivityTracer::on_buffer_completed(CUcontext context, std::uint32_t stream, std::uint8_t* buffer,
                                                  std::size_t /*size*/, std::size_t valid) {
  ActivityTracer& tracer = instance();
  {
    std::lock_guard lock(tracer.mutex_);
    CUpti_Activity* record = nullptr;
    while (cuptiActivityGetNextRecord(buffer, valid, &record) == CUPTI_SUCCESS) {
      switch (record->kind) {
        case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
          const auto* kernel = reinterpret_cast<const CUpti_ActivityKernel10*>(record);
          tracer.ledger_.recorded(kernel->correlationId, {kernel->start, kernel->end},
                                  kernel->name ? kernel->name : "<unnamed kernel>");
          break;
        }
        case CUPTI_ACTIVITY_KIND_MEMCPY: {
          const auto* copy = reinterpret_cast<const CUpti_ActivityMemcpy6*>(record);
          tracer.ledger_.recorded(copy->correlationId, {copy->start, copy->end}, copy_name(copy->copyKind));
          break;
        }
        case CUPTI_ACTIVITY_KIND_MEMCPY2: {
          const auto* copy = reinterpret_cast<const CUpti_ActivityMemcpyPtoP4*>(record);
          tracer.ledger_.recorded(copy->correlationId, {copy->start, copy->end}, kPeerCopyName);
          break;
        }
        case CUPTI_ACTIVITY_KIND_MEMSET: {
          const auto* fill = reinterpret_cast<const CUpti_ActivityMemset4*>(record);
          tracer.ledger_.recorded(fill->correlationId, {fill->start, fill->end}, kFillName);
          break;
        }
        default:
          break;
      }
    }
    std::size_t dropped = 0;
    if (cuptiActivityGetNumDroppedRecords(context, stream, &dropped) == CUPTI_SUCCESS) tracer.ledger_.dropped(dropped);
  }
  buffer_pool().give_back(buffer);
}

}  // namespace kscope::cupti

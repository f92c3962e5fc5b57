#pragma once
// The process-wide CUPTI client of the cupti backend: the driver-API callbacks that map each call
// made in a region (kernel launches; with calls observed, deprecated launches, copies and fills
// too) to that region by
// correlation id, whichever thread made it, and the activity buffers CUPTI fills with their records
// (CONCURRENT_KERNEL; with calls observed, MEMCPY, MEMCPY2 and MEMSET too).
//
// CUPTI allows one subscriber per process: the shared one (backends/cupti_subscriber) routes its
// callbacks here while a session runs, which enables what it needs and disables it again, leaving
// CUPTI quiet, when it ends. Sessions do not overlap (core/engine/session_guard.hpp).
#include <cupti.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>

#include "backends/cupti/activity_ledger.hpp"
#include "backends/stream_order.hpp"

namespace kscope::cupti {

class ActivityTracer {
 public:
  // Never destroyed: CUPTI may still call back while the process exits, after static destructors ran.
  static ActivityTracer& instance();

  // `observe_calls`: copies and fills are traced too, and launch_marker() is available. `order`
  // sees every launch, copy, fill and stream destruction until the session ends.
  void begin_session(bool observe_calls, StreamOrder& order);
  void end_session() noexcept;

  // The region calls are made in from now on (-1: none).
  void set_region(std::int64_t region);
  // The measured call of `region`, the open one, returned on `caller_stream`: calls made in it from
  // now on are flagged, its work that stream was not ordered after is unjoined, and `launch_marker`
  // (which launches one kernel on the caller's stream) makes its stream marker.
  void call_returned(std::int64_t region, std::uintptr_t caller_stream, const std::function<void()>& launch_marker);

  // The run in progress is over; calls from now on belong to the next one.
  void end_run();
  // Forgets the run in progress (its body failed); call once its records have been flushed.
  void drop_run();
  // What the ended runs produced; the run numbering starts again.
  RunTrace take_runs();
  // Every call so far has its record (see ActivityLedger::complete).
  bool runs_complete();
  // Whether a call that can leave persisting-L2 state (the set-aside limit, a stream's access-policy
  // window) was made since the last ask (or the session began) while calls are observed; asking
  // forgets it.
  bool take_persisting_state_call();
  std::string fatal_error();

 private:
  ActivityTracer() = default;
  void quiet() noexcept;
  void clear();

  static void CUPTIAPI on_callback(void* userdata, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                                   const void* data);
  void on_driver_call(CUpti_CallbackId cbid, const CUpti_CallbackData& call);
  // A capture begun (step +1, counted when it succeeded) or ended (-1).
  void count_capture(int step, CUresult result);
  static void CUPTIAPI on_buffer_requested(std::uint8_t** buffer, std::size_t* size, std::size_t* max_records);
  static void CUPTIAPI on_buffer_completed(CUcontext context, std::uint32_t stream, std::uint8_t* buffer,
                                           std::size_t size, std::size_t valid);

  std::mutex session_mutex_;  // begin/end of sessions
  bool buffers_registered_ = false;
  bool observing_calls_ = false;
  CUpti_SubscriberHandle subscriber_ = nullptr;
  std::atomic<StreamOrder*> order_{nullptr};  // the session's
  // The open region and whether its call returned, in one word so that a launching thread reads
  // both at once: -1 for none, else region * 2 + returned.
  std::atomic<std::int64_t> region_state_{-1};
  std::atomic<std::int32_t> captures_{0};  // stream captures begun and not yet ended, process-wide
  std::atomic<bool> persisting_state_call_{true};
  std::mutex mutex_;  // ledger_, run_ and fatal_error_: touched by launching threads and CUPTI's buffer thread
  ActivityLedger ledger_;
  std::size_t run_ = 0;      // the run in progress, counted from the last collection
  std::string fatal_error_;  // kept for the life of the process: CUPTI does not come back
};

}  // namespace kscope::cupti

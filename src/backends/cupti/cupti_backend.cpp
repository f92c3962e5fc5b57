#include "backends/cupti/cupti_backend.hpp"

#include <cuda.h>
#include <cupti.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <new>
#include <optional>
#include <utility>

#include "backends/counters/kept_profiler.hpp"
#include "backends/cupti_subscriber.hpp"
#include "base/elapsed.hpp"
#include "core/backend_choice.hpp"
#include "core/log.hpp"
#include "device/cuda_check.hpp"
#include "kscope/errors.hpp"
#include "kscope/metrics.hpp"

namespace kscope {
namespace {

using device::check_cuda;
using device::check_cupti;

// Activity buffers handed to CUPTI and returned full; reused, so a session allocates nothing
// once the pool holds as many buffers as CUPTI keeps in flight (one per launching thread).
class BufferPool {
 public:
  static constexpr std::size_t kBytes = 4 << 20;   // CUPTI recommends 1-10 MB
  static constexpr std::align_val_t kAlign{8};     // CUPTI requires 8-byte alignment

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

struct KernelRecord {
  std::size_t run;  // among the runs ended since the last collection
  std::int64_t region;
  std::uint64_t start;
  std::uint64_t end;
  std::uint32_t correlation;
  std::string mangled_name;
};

struct Launch {
  std::size_t run;
  std::int64_t region;
  bool graph;          // a graph launch yields zero or more kernel records
  bool recorded = false;
};

// What the runs since the last collection produced, taken out of the tracer by collect_runs.
struct RunTrace {
  std::vector<KernelRecord> kernels;
  std::unordered_map<std::uint32_t, Launch> launches;
  std::size_t dropped_records = 0;
  std::string fatal_error;  // CUPTI's fatal-error notification, if any (it then detached)
};

// The process-wide CUPTI client. Never destroyed: CUPTI may still call back while the process
// exits, after static destructors have run.
class Tracer {
 public:
  static Tracer& instance() {
    static Tracer* tracer = new Tracer;
    return *tracer;
  }

  void begin_session() {
    std::lock_guard lock(session_mutex_);
    if (std::string fatal = fatal_error(); !fatal.empty()) throw BackendError(fatal_message(fatal));
    // The process's one CUPTI subscriber, shared with the counters backend, now calls us.
    subscriber_ = cupti::route_callbacks(&Tracer::on_callback, this);
    if (!buffers_registered_) {
      check_cupti(cuptiActivityRegisterCallbacks(&Tracer::on_buffer_requested,
                                                 &Tracer::on_buffer_completed),
                  "cuptiActivityRegisterCallbacks");
      buffers_registered_ = true;
    }
    try {
      for (CUpti_CallbackId cbid : cupti::kLaunchCallbacks) {
        check_cupti(cuptiEnableCallback(1, subscriber_, CUPTI_CB_DOMAIN_DRIVER_API, cbid),
                    "cuptiEnableCallback(driver launch)");
      }
      check_cupti(cuptiEnableCallback(1, subscriber_, CUPTI_CB_DOMAIN_STATE,
                                      CUPTI_CBID_STATE_FATAL_ERROR),
                  "cuptiEnableCallback(state fatal error)");
      check_cupti(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL),
                  "cuptiActivityEnable(CONCURRENT_KERNEL)");
    } catch (...) {
      quiet();
      throw;
    }
    clear();
  }

  void end_session() noexcept {
    std::lock_guard lock(session_mutex_);
    quiet();
  }

  void set_region(std::int64_t region) { region_.store(region, std::memory_order_release); }

  void clear() {
    std::lock_guard lock(mutex_);
    trace_ = RunTrace{};
    run_ = 0;
  }

  // The run in progress is over; launches from now on belong to the next one.
  void end_run() {
    std::lock_guard lock(mutex_);
    ++run_;
  }

  // Forgets the run in progress (its body failed); call once its records have been flushed.
  void drop_run() {
    std::lock_guard lock(mutex_);
    std::erase_if(trace_.launches, [&](const auto& entry) { return entry.second.run == run_; });
    std::erase_if(trace_.kernels, [&](const KernelRecord& k) { return k.run == run_; });
  }

  // What the ended runs produced; the run numbering starts again.
  RunTrace take_runs() {
    std::lock_guard lock(mutex_);
    RunTrace runs = std::exchange(trace_, RunTrace{});
    runs.fatal_error = fatal_error_;
    run_ = 0;
    return runs;
  }

  // Every launch so far has its record. Unknown for graph launches (any number of kernels).
  bool run_complete() {
    std::lock_guard lock(mutex_);
    return std::all_of(trace_.launches.begin(), trace_.launches.end(),
                       [](const auto& entry) { return !entry.second.graph && entry.second.recorded; });
  }

  std::string fatal_error() {
    std::lock_guard lock(mutex_);
    return fatal_error_;
  }

  static std::string fatal_message(const std::string& detail) {
    return "CUPTI reported a fatal error and detached from this process (" + detail +
           "): the cupti backend cannot measure here any more; use " + detail::backend_choice(Backend::events) +
           " or restart the process";
  }

 private:
  Tracer() = default;

  // Disables everything a session enabled and drains the records still buffered, so that nothing
  // runs on the user's launches between sessions.
  void quiet() noexcept {
    set_region(-1);
    cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
    for (CUpti_CallbackId cbid : cupti::kLaunchCallbacks) {
      cuptiEnableCallback(0, subscriber_, CUPTI_CB_DOMAIN_DRIVER_API, cbid);
    }
    cuptiEnableCallback(0, subscriber_, CUPTI_CB_DOMAIN_STATE, CUPTI_CBID_STATE_FATAL_ERROR);
    cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    clear();
  }

  static void CUPTIAPI on_callback(void* userdata, CUpti_CallbackDomain domain,
                                   CUpti_CallbackId cbid, const void* data) {
    auto& tracer = *static_cast<Tracer*>(userdata);
    if (domain == CUPTI_CB_DOMAIN_STATE) {
      const auto* state = static_cast<const CUpti_StateData*>(data);
      const char* message = state->notification.message;
      std::lock_guard lock(tracer.mutex_);
      tracer.fatal_error_ = message ? message : "no details";
      return;
    }
    if (domain != CUPTI_CB_DOMAIN_DRIVER_API) return;
    const auto* call = static_cast<const CUpti_CallbackData*>(data);
    if (call->callbackSite == CUPTI_API_ENTER) {
      // The region open when the launch is issued owns its kernels: regions are process-wide.
      const std::int64_t region = tracer.region_.load(std::memory_order_acquire);
      if (region < 0) return;
      std::lock_guard lock(tracer.mutex_);
      tracer.trace_.launches.emplace(call->correlationId,
                                     Launch{tracer.run_, region, cupti::is_graph_launch(cbid)});
    } else if (*static_cast<const CUresult*>(call->functionReturnValue) != CUDA_SUCCESS) {
      // A failed launch runs no kernel; forget it rather than report a missing record.
      std::lock_guard lock(tracer.mutex_);
      tracer.trace_.launches.erase(call->correlationId);
    }
  }

  static void CUPTIAPI on_buffer_requested(std::uint8_t** buffer, std::size_t* size,
                                           std::size_t* max_records) {
    *buffer = instance().pool_.take();
    *size = BufferPool::kBytes;
    *max_records = 0;  // as many as fit
  }

  static void CUPTIAPI on_buffer_completed(CUcontext context, std::uint32_t stream,
                                           std::uint8_t* buffer, std::size_t /*size*/,
                                           std::size_t valid) {
    Tracer& tracer = instance();
    {
      std::lock_guard lock(tracer.mutex_);
      CUpti_Activity* record = nullptr;
      while (cuptiActivityGetNextRecord(buffer, valid, &record) == CUPTI_SUCCESS) {
        if (record->kind != CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) continue;
        const auto* kernel = reinterpret_cast<const CUpti_ActivityKernel10*>(record);
        auto launch = tracer.trace_.launches.find(kernel->correlationId);
        if (launch == tracer.trace_.launches.end()) continue;  // launched outside any region
        launch->second.recorded = true;
        tracer.trace_.kernels.push_back({launch->second.run, launch->second.region, kernel->start, kernel->end,
                                         kernel->correlationId,
                                         kernel->name ? kernel->name : "<unnamed kernel>"});
      }
      std::size_t dropped = 0;
      if (cuptiActivityGetNumDroppedRecords(context, stream, &dropped) == CUPTI_SUCCESS) {
        tracer.trace_.dropped_records += dropped;
      }
    }
    tracer.pool_.give_back(buffer);
  }

  std::mutex session_mutex_;  // begin/end of sessions
  bool buffers_registered_ = false;
  CUpti_SubscriberHandle subscriber_ = nullptr;
  std::atomic<std::int64_t> region_{-1};
  std::mutex mutex_;  // trace_ and run_, touched by launching threads and CUPTI's buffer thread
  RunTrace trace_;
  std::size_t run_ = 0;  // the run in progress, counted from the last collection
  std::string fatal_error_;  // kept for the life of the process: CUPTI does not come back
  BufferPool pool_;
};

}  // namespace

CuptiBackend::CuptiBackend(int device) : device_(device) {}

CuptiBackend::~CuptiBackend() { end_session(); }

std::vector<MetricSpec> CuptiBackend::metrics() const {
  return {{kCuptiKernelDuration, "ns",
           "GPU end − start timestamps of each kernel from the CUPTI Activity API "
           "(CONCURRENT_KERNEL records; with replay_mode range, from the region's first kernel's "
           "start to its last kernel's end); not ncu's gpu__time_duration.sum, which is measured "
           "under kernel replay"}};
}

void CuptiBackend::begin_session(const Settings& settings) {
  // An enabled range profiler on the context can leave the activity records without timestamps.
  counters::release_kept_profiler();
  device_.begin_session(settings);
  Tracer::instance().begin_session();
  session_open_ = true;
}

void CuptiBackend::end_session() noexcept {
  if (!session_open_) return;
  if (time_.collections > 0 && detail::log_enabled(detail::LogLevel::debug)) {
    using detail::as_milliseconds;
    detail::log_debug("cupti: " + std::to_string(time_.collections) + " collections: waiting for the GPU " +
                      as_milliseconds(time_.synchronize_s) + ", CUPTI's activity flush " +
                      as_milliseconds(time_.flush_s) + ", attributing the records " +
                      as_milliseconds(time_.attribute_s));
  }
  time_ = {};
  Tracer::instance().end_session();
  session_open_ = false;
}

void CuptiBackend::region_begin(const RegionContext& region) {
  Tracer::instance().set_region(static_cast<std::int64_t>(region.index));
}

void CuptiBackend::region_end(const RegionContext&) { Tracer::instance().set_region(-1); }

void CuptiBackend::end_run(const RunContext&, const std::vector<RegionRecord>& regions) {
  Tracer::instance().end_run();
  ended_region_counts_.push_back(regions.size());
}

std::vector<RunMeasurement> CuptiBackend::collect_batch() {
  const std::vector<std::size_t> region_counts = std::exchange(ended_region_counts_, {});
  ++time_.collections;
  std::optional<detail::TimeInto> timed(time_.synchronize_s);
  // FlushAll does not wait for the GPU: kernels still running would have no record yet. After the
  // sync every record is complete, so the plain flush normally delivers them all; the forced one
  // (which also hands back buffers that CUPTI still considers open) is the fallback.
  check_cuda(cudaDeviceSynchronize(), "cudaDeviceSynchronize (end of run)");
  timed.emplace(time_.flush_s);
  check_cupti(cuptiActivityFlushAll(0), "cuptiActivityFlushAll");
  if (!Tracer::instance().run_complete()) {
    check_cupti(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED),
                "cuptiActivityFlushAll(FLUSH_FORCED)");
  }
  RunTrace trace = Tracer::instance().take_runs();
  timed.emplace(time_.attribute_s);

  if (!trace.fatal_error.empty()) throw BackendError(Tracer::fatal_message(trace.fatal_error));
  if (trace.dropped_records > 0) {
    throw BackendError("CUPTI dropped " + std::to_string(trace.dropped_records) +
                       " activity records for lack of buffer space, so some kernels would be "
                       "missing: launch fewer kernels per run");
  }
  std::size_t unrecorded = 0;
  for (const auto& [correlation, launch] : trace.launches) {
    if (!launch.graph && !launch.recorded) ++unrecorded;
  }
  if (unrecorded > 0) {
    throw BackendError("CUPTI delivered no activity record for " + std::to_string(unrecorded) +
                       " kernel launch(es) made inside regions; the durations would be "
                       "incomplete. Is another tool tracing this process?");
  }

  std::sort(trace.kernels.begin(), trace.kernels.end(), [](const auto& a, const auto& b) {
    return a.start != b.start ? a.start < b.start : a.correlation < b.correlation;
  });
  std::vector<RunMeasurement> runs;
  for (std::size_t count : region_counts) runs.emplace_back(count);
  for (const KernelRecord& kernel : trace.kernels) {
    const std::string& name = kernel_names_.of(kernel.mangled_name);
    if (kernel.start == 0 && kernel.end == 0) {
      throw BackendError("CUPTI returned no timestamps (start = end = 0) for kernel '" + name +
                         "': a counter profiler (CUPTI range profiler, ncu) is active in this "
                         "process, or CUPTI ran out of device timestamp buffers. Profile with "
                         "counters and with timing in separate runs");
    }
    if (kernel.run >= runs.size() || kernel.region >= static_cast<std::int64_t>(runs[kernel.run].size())) {
      throw InternalError("kernel '" + name + "' was launched in region " + std::to_string(kernel.region) +
                          " of run " + std::to_string(kernel.run) +
                          ", which the session did not end (kscope bug: please report it with this message)");
    }
    runs[kernel.run][static_cast<std::size_t>(kernel.region)].push_back(
        {name, {static_cast<double>(kernel.end) - static_cast<double>(kernel.start)}, GpuInterval{kernel.start, kernel.end}});
  }
  return runs;
}

void CuptiBackend::abandon_run(const RunContext&) noexcept {
  // Let the failed run's kernels finish and drain their records, so none reaches the next run;
  // the runs ended before it stay for collect_runs.
  Tracer::instance().set_region(-1);
  cudaDeviceSynchronize();
  cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  Tracer::instance().drop_run();
}

}  // namespace kscope

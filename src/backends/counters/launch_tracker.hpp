#pragma once
// Records, in launch order, every kernel launch the process makes while a replay pass is being
// profiled, with the run of the batch and the region open at that moment (regions are
// process-wide, so launches from worker threads count). The range profiler's auto ranges carry
// only numbers; these records give them kernel names, runs and regions.
#include <cupti.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "backends/counters/range_attribution.hpp"
#include "core/model/kernel_names.hpp"

namespace kscope::counters {

class LaunchTracker {
 public:
  LaunchTracker() = default;
  ~LaunchTracker() { disable(); }
  LaunchTracker(const LaunchTracker&) = delete;
  LaunchTracker& operator=(const LaunchTracker&) = delete;

  // Takes the process's CUPTI subscriber and enables the launch callbacks; throws
  // cupti::OtherProfilerError when another tool owns CUPTI.
  void enable();
  void disable() noexcept;

  void start_pass();             // forget earlier launches and record from now on
  // The runner's L2 flush is enqueued from this thread until end_flush(): inside a pass one flush
  // record stands for it, and the launches it makes (a graph launch) are not recorded; whether
  // they have ranges is found by count (attribute_kernel_ranges).
  void begin_flush();
  void end_flush();
  std::vector<Launch> end_pass();  // stop recording; the pass's launches, demangled
  void set_run(std::size_t run) { run_.store(run, std::memory_order_release); }  // position in the batch
  void set_region(std::ptrdiff_t region) { region_.store(region, std::memory_order_release); }
  // The pass's launches so far of one run of the batch: how many, and which (demangled).
  std::size_t count(std::size_t run);
  std::vector<Launch> launches(std::size_t run);

 private:
  struct Record {
    std::uint32_t correlation;
    std::size_t run;
    std::ptrdiff_t region;
    std::string mangled;
    bool graph;
    bool flush;
    LaunchShape shape;
  };
  Launch launch_of(const Record& r);  // demangles: the session's thread only, outside mutex_
  static void CUPTIAPI on_callback(void* self, CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* data);

  CUpti_SubscriberHandle subscriber_ = nullptr;
  std::atomic<std::size_t> run_{0};
  std::atomic<std::ptrdiff_t> region_{-1};
  std::mutex mutex_;  // recording_, flushing_ and records_: written by launching threads
  bool recording_ = false;
  std::optional<std::thread::id> flushing_;  // the thread enqueueing a flush
  std::vector<Record> records_;
  KernelNames kernel_names_;
};

}  // namespace kscope::counters

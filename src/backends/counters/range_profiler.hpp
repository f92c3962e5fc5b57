#pragma once
// The target side of CUPTI's range profiler (cupti_range_profiler.h) behind a strict state
// machine. CUPTI checks very little itself: Start without SetConfig, or after a failed SetConfig,
// segfaults, and a PushRange in AutoRange mode breaks the next session. So every call is checked
// against the state, and the first failure disables the profiler for good ("poisoned").
//
//   enabled --begin_batch--> configured --start--> started --stop--> between_passes --start--> ...
//                                                          \-stop-> submitted --decode--> decoded
//   decoded --begin_batch--> configured ...    any failure --> poisoned (disabled)
#include <cuda.h>
#include <cupti_range_profiler.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "backends/counters/profiler_host.hpp"
#include "backends/counters/range_attribution.hpp"

namespace kscope::counters {

// cuptiProfilerInitialize, once per process and kept (it installs CUPTI's driver hooks).
// Throws cupti::OtherProfilerError when another tool owns CUPTI.
void initialize_profiler();

// The CUPTI chip name of CUDA device `ordinal` ("GH100"); initialises the profiler.
std::string chip_of_device(int ordinal);

// Throws BackendError saying why, when the device cannot be profiled (vGPU, SLI, CMP, WSL, ...).
void require_profiling_support(CUdevice device, const std::string& gpu);

// The context's counter availability image, for MetricConfig: read on the context's first call,
// before any range profiler is enabled on it (CUPTI may refuse it then), and kept.
const std::vector<std::uint8_t>& counter_availability(CUcontext context);

enum class RangeKind {
  per_kernel,  // CUPTI_AutoRange: one range per kernel, named "0", "1", ... in launch order
  per_region,  // CUPTI_UserRange: one range per push_range / pop_range pair
};

class RangeProfiler {
 public:
  // Enables the range profiler on `context` (the call that fails without counter permission);
  // a pass holds at most `max_ranges` ranges. Passes are driven by the caller
  // (CUPTI_UserReplay): start/stop once per pass until stop() reports all submitted.
  RangeProfiler(CUcontext context, std::shared_ptr<const MetricConfig> config, RangeKind kind,
                std::size_t max_ranges);
  ~RangeProfiler();
  RangeProfiler(const RangeProfiler&) = delete;
  RangeProfiler& operator=(const RangeProfiler&) = delete;

  // Bytes of a counter data image holding `ranges` ranges of this config (CUPTI's size).
  std::size_t image_bytes(std::size_t ranges);
  // A fresh counter data image for `ranges` ranges (at most max_ranges), and the config programmed
  // for the batch's passes. The image is host memory, rewritten here: its cost grows with it.
  void begin_batch(std::size_t ranges);
  void start();                              // opens a pass
  void push_range(const std::string& name);  // per_region only, inside a pass
  void pop_range();
  bool stop();                               // closes the pass; true once every pass was submitted
  std::vector<RangeResult> decode();         // waits for the GPU; one result per range

  std::size_t counter_data_bytes() const { return counter_data_.size(); }
  std::size_t max_ranges() const { return max_ranges_; }  // per pass
  CUcontext context() const { return context_; }
  const MetricConfig& config() const { return *config_; }
  RangeKind kind() const { return kind_; }
  // Between batches and healthy: another call may take it over (kept_profiler.hpp).
  bool idle() const { return state_ == State::enabled || state_ == State::configured || state_ == State::decoded; }
  // Its context is being destroyed: CUPTI's object goes with it, so it is let go without a call.
  void forget() noexcept;

 private:
  enum class State { enabled, configured, started, between_passes, submitted, decoded, poisoned };
  void expect(State wanted, const char* call) const;
  void check(CUptiResult status, const char* call);  // poisons on failure, then throws
  void disable() noexcept;

  CUcontext context_;
  std::shared_ptr<const MetricConfig> config_;
  RangeKind kind_;
  std::size_t max_ranges_;
  CUpti_RangeProfiler_Object* object_ = nullptr;
  std::vector<std::uint8_t> counter_data_;
  std::size_t image_ranges_ = 0;  // the ranges counter_data_ holds
  State state_ = State::poisoned;
  std::string poison_;  // the failure that disabled the profiler
};

}  // namespace kscope::counters

#pragma once
// The SASS metrics' lifecycle, apart from CUPTI's calls so that it is tested without a GPU
// (tests/cpu/test_sass_lifecycle.cpp). cupti_sass_metrics.h has two states of its own:
//  - a device's configuration (the metrics to count), which "user can call ... once for the device":
//    a second set needs an unset first, and a set after an unset fails with
//    CUPTI_ERROR_OUT_OF_MEMORY (CUDA 13.0, driver 580), so each device is configured once per
//    process and kept while the process lives; a set that failed is not tried again;
//  - a counting range on a context: enabled, the kernels run, its records read (the data properties
//    and the flush, which CUPTI allows only inside the range), disabled.
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace kscope::pcsampling {

struct SassCount {
  std::string function;  // its symbol (mangled)
  std::uint64_t pc_offset = 0;
  std::uint64_t executed = 0;         // warp-level instructions
  std::uint64_t thread_executed = 0;  // threads that executed them
};

// One context's counting calls; each throws Error saying what failed.
class SassCalls {
 public:
  virtual ~SassCalls() = default;
  virtual void enable() = 0;
  virtual std::vector<SassCount> read() = 0;  // inside the range: what it counted so far
  virtual void disable() = 0;
};

// The devices this process configured, or failed to.
class SassConfigurations {
 public:
  static SassConfigurations& process();
  // The first call for a device runs `set`; every call throws BackendError with the reason where
  // that set failed.
  void configure(int device, const std::function<void()>& set);

 private:
  std::mutex mutex_;
  std::map<int, std::string> failures_;  // "" where configured
};

// One counting range: enabled when made (nothing to undo where that throws), read and disabled by
// finish(), disabled with its counts dropped where destroyed unfinished. Disabled exactly once.
class SassRange {
 public:
  explicit SassRange(SassCalls& calls);
  ~SassRange();
  SassRange(const SassRange&) = delete;
  SassRange& operator=(const SassRange&) = delete;

  // The range's counts, then counting off (also where reading them fails: that error is thrown).
  std::vector<SassCount> finish();

 private:
  SassCalls& calls_;
  bool enabled_ = true;
};

}  // namespace kscope::pcsampling

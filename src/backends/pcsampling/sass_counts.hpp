#pragma once
// Exact per-instruction counts beside the samples: CUPTI's SASS metrics patch each executed
// instruction to count the warps (smsp__sass_inst_executed) and threads
// (smsp__sass_thread_inst_executed) that execute it. Patched code runs slower, so the counts are
// taken in a pass of their own, never while sampling. The device's configuration is set once per
// process and a counting range is a SassRange (sass_lifecycle.hpp).
#include <cuda.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "backends/pcsampling/sass_lifecycle.hpp"

namespace kscope::pcsampling {

class SassCounter {
 public:
  // Configures the two metrics on the device where this process has not yet; throws BackendError
  // where the GPU cannot count them (the same reason for every session of the process).
  SassCounter(int device_ordinal, CUcontext context);
  ~SassCounter();
  SassCounter(const SassCounter&) = delete;
  SassCounter& operator=(const SassCounter&) = delete;

  void start();                   // counts the instructions executed from now on
  std::vector<SassCount> stop();  // after the GPU is idle: what they counted, and counting off

 private:
  std::unique_ptr<SassCalls> calls_;
  std::optional<SassRange> range_;  // destroyed before calls_: an open range is disabled
};

}  // namespace kscope::pcsampling

#pragma once
// Exact per-instruction counts beside the samples: CUPTI's SASS metrics patch each executed
// instruction to count the warps (smsp__sass_inst_executed) and threads
// (smsp__sass_thread_inst_executed) that execute it. Patched code runs slower, so the counts are
// taken in a pass of their own, never while sampling.
#include <cuda.h>

#include <cstdint>
#include <string>
#include <vector>

namespace kscope::pcsampling {

struct SassCount {
  std::string function;  // its symbol (mangled)
  std::uint64_t pc_offset = 0;
  std::uint64_t executed = 0;         // warp-level instructions
  std::uint64_t thread_executed = 0;  // threads that executed them
};

class SassCounter {
 public:
  // Configures the two metrics on the device; throws BackendError where the GPU cannot count them.
  SassCounter(int device_ordinal, CUcontext context);
  ~SassCounter();
  SassCounter(const SassCounter&) = delete;
  SassCounter& operator=(const SassCounter&) = delete;

  void start();                  // counts the instructions executed from now on
  std::vector<SassCount> stop();  // after the GPU is idle: what they counted, and counting off

 private:
  int device_;
  CUcontext context_;
  std::uint64_t executed_id_ = 0, threads_id_ = 0;
  bool counting_ = false;
};

}  // namespace kscope::pcsampling

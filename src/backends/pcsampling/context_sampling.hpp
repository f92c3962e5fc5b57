#pragma once
// CUPTI's PC sampling on one CUDA context, for a session: enabled and configured when made (every
// stall reason but the "_not_issued" subsets, so a sample counts once; continuous collection, so
// kernels run as they would; start/stop control, so only the regions are sampled), started and
// stopped around each region, its records drained after each stop, disabled when destroyed.
#include <cuda.h>
#include <cupti_pcsampling.h>

#include <cstdint>
#include <string>
#include <vector>

namespace kscope::pcsampling {

// One sampled instruction's samples in a range.
struct PcRecord {
  std::uint64_t cubin_crc = 0;
  std::string function;  // its symbol (mangled)
  std::uint64_t pc_offset = 0;
  std::vector<std::pair<std::string, std::uint64_t>> stalls;  // Nsight Compute's reason names
};

// What one range (start to stop) sampled.
struct RangeSamples {
  std::vector<PcRecord> records;
  std::uint64_t total = 0;    // every sample of the range, those of kernels CUPTI gives no record for included
  std::uint64_t dropped = 0;  // lost in the hardware (a full buffer)
  bool buffer_full = false;   // CUPTI's buffer filled: records were lost
};

class ContextSampling {
 public:
  // Throws BackendError saying what fixes it: no permission (ERR_NVGPUCTRPERM), the performance
  // monitor held by DCGM, another profiler owning CUPTI, a GPU without PC sampling.
  ContextSampling(CUcontext context, unsigned period_log2);
  ~ContextSampling();
  ContextSampling(const ContextSampling&) = delete;
  ContextSampling& operator=(const ContextSampling&) = delete;

  void start();
  void stop();
  // After stop(): everything the range sampled.
  RangeSamples drain();

 private:
  struct Buffer {
    explicit Buffer(std::size_t pcs, std::size_t reasons);
    CUpti_PCSamplingData data{};
    std::vector<CUpti_PCSamplingPCData> pcs;
    std::vector<std::vector<CUpti_PCSamplingStallReason>> reasons;
  };
  void take(Buffer& buffer, RangeSamples& out);

  CUcontext context_;
  std::vector<std::uint32_t> reason_indices_;  // those collected
  std::vector<std::string> reason_names_;      // by CUPTI's index, Nsight Compute's names
  Buffer config_buffer_;  // where CUPTI puts records on its own (a module unloaded, sampling disabled)
  Buffer read_buffer_;    // what cuptiPCSamplingGetData fills
  bool enabled_ = false;
};

}  // namespace kscope::pcsampling

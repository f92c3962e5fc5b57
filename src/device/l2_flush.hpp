#pragma once
// Leaves the L2 cold and clean before a cold-cache measurement, as ncu --cache-control all does:
//   1. a memset of one L2-sized buffer evicts whatever the previous work left (NVBench's method;
//      on the H200 a 1x-L2 memset is as cold as 2x or 256 MiB, and a read-only flush is weaker);
//   2. discard.global.L2 on every line of that buffer then drops the memset's dirty lines without
//      a write-back. Without it the measured kernel paid for writing them back: small memory-bound
//      kernels ran up to 20% slower than under ncu on the H200; a read of a second L2-sized buffer
//      instead of the discard still left 23% of a 32 MiB read's bytes written back.
// Both are captured once into a CUDA graph and launched as one: one call on the host instead of
// two. The counters backend launches them one by one instead (enqueue): CUPTI does not support a
// graph launch in an AutoRange pass with user replay, and on the H200 it broke multi-pass sessions
// (MeasuredDevice::FlushLaunch). The graph's launch makes persisting lines normal first
// (cudaCtxResetPersistingL2Cache): an eviction-priority hint (PTX evict_last: Triton's
// eviction_policy='evict_last', CUTLASS's cache hints) or an access-policy window makes lines
// persisting even without a set-aside, and about half of a 4 MiB buffer so loaded survived the
// memset on an H100 (bench/l2_flush_survival.cu).
#include <cuda_runtime_api.h>

#include <cstddef>
#include <memory>

namespace kscope::device {

class L2Flusher {
 public:
  // Allocates the L2-sized buffer on `device`, which must be the current device, and builds the
  // flush's graph.
  explicit L2Flusher(int device);
  ~L2Flusher();
  L2Flusher(const L2Flusher&) = delete;
  L2Flusher& operator=(const L2Flusher&) = delete;

  // The process's flusher of `device` (the current device): made on first use and kept, so a
  // profile() call neither allocates nor frees its buffer (60 MiB on an H200).
  static L2Flusher& of(int device);

  // Makes persisting lines normal, then enqueues the flush on `stream` (one graph launch, outside
  // every region). Call it outside any timed interval: it costs ~20 us on an H200.
  void flush(cudaStream_t stream);
  // The memset and the discard kernel launched one by one, without the reset: what the graph holds.
  // The counters backend flushes so: the reset runs work of its own on the GPU, which CUPTI's kernel
  // replay counted as a range that no launch explains (60 ranges for 29 launches on an H100), so
  // there lines hinted evict_last may outlast the flush.
  void enqueue(cudaStream_t stream);

  std::size_t bytes() const { return bytes_; }

 private:
  struct DeviceFree {
    void operator()(void* p) const noexcept;
  };
  std::size_t bytes_ = 0;
  int discard_blocks_ = 0;
  bool persisting_l2_supported_ = false;
  std::unique_ptr<void, DeviceFree> buffer_;
  cudaGraphExec_t graph_ = nullptr;
};

}  // namespace kscope::device

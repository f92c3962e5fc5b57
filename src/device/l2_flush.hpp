#pragma once
// Evicts the L2 before a cold-cache measurement: a memset of one L2-sized device buffer (NVBench's
// method; on the H200 a 1x-L2 memset is as cold as 2x or 256 MiB and the cheapest, and a read-based
// flush is weaker), preceded by a persisting-L2 reset when persisting lines may exist.
#include <cuda_runtime_api.h>

#include <cstddef>
#include <memory>

namespace kscope::device {

class L2Flusher {
 public:
  // Allocates the flush buffer on `device`, which must be the current device.
  explicit L2Flusher(int device);

  // Enqueues the flush on `stream`. Call it outside any timed interval: it costs ~21 us on an H200.
  void flush(cudaStream_t stream);

  std::size_t bytes() const { return bytes_; }

 private:
  struct DeviceFree {
    void operator()(void* p) const noexcept;
  };
  std::size_t bytes_ = 0;
  bool persisting_l2_supported_ = false;
  std::unique_ptr<void, DeviceFree> buffer_;
};

}  // namespace kscope::device

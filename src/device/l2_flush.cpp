#include "device/l2_flush.hpp"

#include "device/cuda_check.hpp"

namespace kscope::device {

void L2Flusher::DeviceFree::operator()(void* p) const noexcept { cudaFree(p); }

L2Flusher::L2Flusher(int device) {
  int l2 = 0;
  int persisting_max = 0;
  check_cuda(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, device),
             "cudaDeviceGetAttribute(cudaDevAttrL2CacheSize)");
  check_cuda(cudaDeviceGetAttribute(&persisting_max, cudaDevAttrMaxPersistingL2CacheSize, device),
             "cudaDeviceGetAttribute(cudaDevAttrMaxPersistingL2CacheSize)");
  bytes_ = static_cast<std::size_t>(l2);
  persisting_l2_supported_ = persisting_max > 0;
  if (bytes_ == 0) return;  // no L2 to flush
  void* p = nullptr;
  check_cuda(cudaMalloc(&p, bytes_), "cudaMalloc(L2 flush buffer)");
  buffer_.reset(p);
}

void L2Flusher::flush(cudaStream_t stream) {
  if (!buffer_) return;
  if (persisting_l2_supported_) {
    // Persisting lines survive a memset; demote them to normal first. The user's persisting limit
    // itself is left as it is.
    std::size_t limit = 0;
    check_cuda(cudaDeviceGetLimit(&limit, cudaLimitPersistingL2CacheSize),
               "cudaDeviceGetLimit(cudaLimitPersistingL2CacheSize)");
    if (limit > 0) check_cuda(cudaCtxResetPersistingL2Cache(), "cudaCtxResetPersistingL2Cache");
  }
  check_cuda(cudaMemsetAsync(buffer_.get(), 0, bytes_, stream), "cudaMemsetAsync(L2 flush)");
}

}  // namespace kscope::device

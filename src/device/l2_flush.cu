#include "device/l2_flush.hpp"

#include "device/cuda_check.hpp"

namespace kscope::device {
namespace {

constexpr std::size_t kLineBytes = 128;  // discard.global.L2 works on whole 128-byte lines

// Drops the memset's lines from the L2 without writing them back (their data are scratch), so the
// measured kernel finds the cache empty rather than full of dirty lines. Volta/Turing have no
// discard: there the memset's lines stay dirty.
__global__ void discard_lines(char* data, std::size_t lines) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < lines;
       i += std::size_t(gridDim.x) * blockDim.x) {
#if __CUDA_ARCH__ >= 800
    asm volatile("discard.global.L2 [%0], 128;" ::"l"(data + i * kLineBytes) : "memory");
#endif
  }
}

constexpr int kDiscardThreads = 256;

}  // namespace

void L2Flusher::DeviceFree::operator()(void* p) const noexcept { cudaFree(p); }

L2Flusher::L2Flusher(int device) {
  int l2 = 0, persisting_max = 0, sms = 0;
  check_cuda(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, device),
             "cudaDeviceGetAttribute(cudaDevAttrL2CacheSize)");
  check_cuda(cudaDeviceGetAttribute(&persisting_max, cudaDevAttrMaxPersistingL2CacheSize, device),
             "cudaDeviceGetAttribute(cudaDevAttrMaxPersistingL2CacheSize)");
  check_cuda(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device),
             "cudaDeviceGetAttribute(cudaDevAttrMultiProcessorCount)");
  bytes_ = static_cast<std::size_t>(l2) / kLineBytes * kLineBytes;
  persisting_l2_supported_ = persisting_max > 0;
  discard_blocks_ = 4 * sms;
  if (bytes_ == 0) return;  // no L2 to flush
  void* p = nullptr;
  check_cuda(cudaMalloc(&p, bytes_), "cudaMalloc(L2 flush buffer)");  // 256-byte aligned: whole lines
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
  discard_lines<<<discard_blocks_, kDiscardThreads, 0, stream>>>(static_cast<char*>(buffer_.get()),
                                                                 bytes_ / kLineBytes);
  check_cuda(cudaGetLastError(), "launching the L2 flush's discard");
}

}  // namespace kscope::device

#include "device/l2_flush.hpp"

#include <cstdint>

#include "device/cuda_check.hpp"

namespace kscope::device {
namespace {

// Reads every 16-byte word of `data`. The data are zero, so the sink is never written; the
// compiler cannot know that and keeps the loads.
__global__ void read_through(const uint4* data, std::size_t words, unsigned* sink) {
  unsigned acc = 0;
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < words;
       i += std::size_t(gridDim.x) * blockDim.x) {
    const uint4 v = data[i];
    acc |= v.x | v.y | v.z | v.w;
  }
  if (acc != 0) *sink = acc;
}

constexpr int kReadThreads = 512;

}  // namespace

void L2Flusher::DeviceFree::operator()(void* p) const noexcept { cudaFree(p); }

L2Flusher::DeviceBuffer L2Flusher::allocate(std::size_t bytes) {
  void* p = nullptr;
  check_cuda(cudaMalloc(&p, bytes), "cudaMalloc(L2 flush buffer)");
  return DeviceBuffer(p);
}

L2Flusher::L2Flusher(int device) {
  int l2 = 0, persisting_max = 0, sms = 0;
  check_cuda(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, device),
             "cudaDeviceGetAttribute(cudaDevAttrL2CacheSize)");
  check_cuda(cudaDeviceGetAttribute(&persisting_max, cudaDevAttrMaxPersistingL2CacheSize, device),
             "cudaDeviceGetAttribute(cudaDevAttrMaxPersistingL2CacheSize)");
  check_cuda(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device),
             "cudaDeviceGetAttribute(cudaDevAttrMultiProcessorCount)");
  bytes_ = static_cast<std::size_t>(l2) / sizeof(uint4) * sizeof(uint4);
  persisting_l2_supported_ = persisting_max > 0;
  read_blocks_ = 4 * sms;  // enough warps in flight to read at full bandwidth
  if (bytes_ == 0) return;  // no L2 to flush
  dirty_ = allocate(bytes_);
  clean_ = allocate(bytes_);
  sink_ = allocate(sizeof(unsigned));
  check_cuda(cudaMemset(clean_.get(), 0, bytes_), "cudaMemset(L2 flush read buffer)");
}

void L2Flusher::flush(cudaStream_t stream) {
  if (!dirty_) return;
  if (persisting_l2_supported_) {
    // Persisting lines survive a memset; demote them to normal first. The user's persisting limit
    // itself is left as it is.
    std::size_t limit = 0;
    check_cuda(cudaDeviceGetLimit(&limit, cudaLimitPersistingL2CacheSize),
               "cudaDeviceGetLimit(cudaLimitPersistingL2CacheSize)");
    if (limit > 0) check_cuda(cudaCtxResetPersistingL2Cache(), "cudaCtxResetPersistingL2Cache");
  }
  check_cuda(cudaMemsetAsync(dirty_.get(), 0, bytes_, stream), "cudaMemsetAsync(L2 flush)");
  read_through<<<read_blocks_, kReadThreads, 0, stream>>>(static_cast<const uint4*>(clean_.get()),
                                                          bytes_ / sizeof(uint4), static_cast<unsigned*>(sink_.get()));
  check_cuda(cudaGetLastError(), "launching the L2 flush's read");
}

}  // namespace kscope::device

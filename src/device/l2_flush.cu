#include "device/l2_flush.hpp"

#include <exception>
#include <map>
#include <mutex>

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

// A stream of its own for capturing the flush's graph, whatever other streams are doing.
class CaptureStream {
 public:
  CaptureStream() { check_cuda(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate"); }
  ~CaptureStream() { cudaStreamDestroy(stream_); }
  CaptureStream(const CaptureStream&) = delete;
  CaptureStream& operator=(const CaptureStream&) = delete;
  cudaStream_t get() const { return stream_; }

 private:
  cudaStream_t stream_ = nullptr;
};

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
  CaptureStream capture;
  check_cuda(cudaStreamBeginCapture(capture.get(), cudaStreamCaptureModeThreadLocal),
             "cudaStreamBeginCapture(L2 flush)");
  cudaGraph_t graph = nullptr;
  std::exception_ptr failed;
  try {
    enqueue(capture.get());
  } catch (...) {
    failed = std::current_exception();
  }
  const cudaError_t ended = cudaStreamEndCapture(capture.get(), &graph);  // ends the capture even after a failure
  if (failed) std::rethrow_exception(failed);
  check_cuda(ended, "cudaStreamEndCapture(L2 flush)");
  const cudaError_t instantiated = cudaGraphInstantiate(&graph_, graph, 0);
  cudaGraphDestroy(graph);
  check_cuda(instantiated, "cudaGraphInstantiate(L2 flush)");
}

L2Flusher::~L2Flusher() {
  if (graph_) cudaGraphExecDestroy(graph_);
}

L2Flusher& L2Flusher::of(int device) {
  static std::mutex mutex;
  // Never destroyed: the CUDA runtime may be gone before static destructors run.
  static auto* flushers = new std::map<int, L2Flusher*>;
  std::lock_guard lock(mutex);
  L2Flusher*& flusher = (*flushers)[device];
  if (!flusher) flusher = new L2Flusher(device);
  return *flusher;
}

void L2Flusher::flush(cudaStream_t stream) {
  if (!buffer_) return;
  // Whatever the set-aside: hinted lines persist without one. The user's limit is left as it is.
  // 4 to 7 us of host time on an H100, without waiting for the GPU (bench/evaluate_device_cost.cu).
  if (persisting_l2_supported_) check_cuda(cudaCtxResetPersistingL2Cache(), "cudaCtxResetPersistingL2Cache");
  check_cuda(cudaGraphLaunch(graph_, stream), "cudaGraphLaunch(L2 flush)");
}

void L2Flusher::enqueue(cudaStream_t stream) {
  check_cuda(cudaMemsetAsync(buffer_.get(), 0, bytes_, stream), "cudaMemsetAsync(L2 flush)");
  discard_lines<<<discard_blocks_, kDiscardThreads, 0, stream>>>(static_cast<char*>(buffer_.get()),
                                                                 bytes_ / kLineBytes);
  check_cuda(cudaGetLastError(), "launching the L2 flush's discard");
}

}  // namespace kscope::device

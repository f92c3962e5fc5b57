#include "device/gpu_tensor_checks.hpp"

#include <cuda_runtime_api.h>

#include <cub/block/block_scan.cuh>

#include <algorithm>
#include <bit>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <map>
#include <mutex>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>

#include "core/model/tensor_elements.hpp"
#include "device/cuda_check.hpp"
#include "kscope/errors.hpp"

namespace kscope::device {

struct GpuTensorChecks::Totals {
  unsigned long long mismatched;
  // The largest errors, as the bits of the doubles: non-negative doubles order as their bits do.
  unsigned long long max_abs_error_bits;
  unsigned long long max_rel_error_bits;
  unsigned long long first_mismatch;  // ULLONG_MAX: none
  double atol;                        // the one applied, where the device found it
  // The first mismatching element of each side, as its bytes.
  unsigned char first_candidate[8];
  unsigned char first_reference[8];
};

// One tensor's typical magnitude (core/model/tensor_elements.hpp's rule), found on the device: the
// counts by exponent, the median's place, and the counts of its exponent's mantissa bins.
struct GpuTensorChecks::Magnitudes {
  unsigned long long counted;      // the elements that count toward the scale
  unsigned long long exponent;     // the exponent bin holding their median
  unsigned long long rank_in_bin;  // the median's rank within that bin
  unsigned long long mantissa_counts[detail::kMantissaBins];
  unsigned long long exponent_counts[detail::kExponentBins];
};

namespace {

using Totals = GpuTensorChecks::Totals;
using Magnitudes = GpuTensorChecks::Magnitudes;

constexpr unsigned kThreads = 256;
// Enough blocks to fill any GPU; each thread strides over the rest, so any element count fits.
constexpr std::size_t kMaxBlocks = 4096;

__device__ std::size_t first_item() { return blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; }
__device__ std::size_t item_stride() { return std::size_t(gridDim.x) * blockDim.x; }
__device__ bool warp_leader() { return threadIdx.x % 32 == 0; }

template <class T, class Combine>
__device__ T across_warp(T value, Combine combine) {
  for (int offset = 16; offset > 0; offset /= 2) value = combine(value, __shfl_down_sync(0xffffffffu, value, offset));
  return value;
}

__device__ unsigned long long larger(unsigned long long a, unsigned long long b) { return a > b ? a : b; }
__device__ unsigned long long smaller(unsigned long long a, unsigned long long b) { return a < b ? a : b; }
__device__ unsigned long long sum(unsigned long long a, unsigned long long b) { return a + b; }

// An error's bits for the running maximum: NaN counts as 0, as std::fmax ignores it on the host.
__device__ unsigned long long error_bits(double error) {
  return error != error ? 0ull : static_cast<unsigned long long>(__double_as_longlong(error));
}

__global__ void fresh_totals_kernel(Totals* totals, std::size_t count) {
  for (std::size_t i = first_item(); i < count; i += item_stride()) {
    totals[i] = Totals{};
    totals[i].first_mismatch = ULLONG_MAX;
  }
}

// Adds to `counts` the count of each element's bin, bin_of(element index), in `Bins` bins (Bins
// itself: not counted). Each block counts in shared memory, and the lanes of a warp that share a bin
// add to it once: a tensor's magnitudes mostly fall in a few bins.
template <unsigned Bins, class BinOf>
__device__ void count_bins(std::size_t elements, unsigned long long* counts, BinOf bin_of) {
  __shared__ unsigned block_counts[Bins];
  for (unsigned b = threadIdx.x; b < Bins; b += blockDim.x) block_counts[b] = 0;
  __syncthreads();
  // `base` is the same for a whole block, so every lane of a warp takes each step (for the match).
  for (std::size_t base = blockIdx.x * std::size_t(blockDim.x); base < elements; base += item_stride()) {
    const std::size_t i = base + threadIdx.x;
    const unsigned bin = i < elements ? bin_of(i) : Bins;
    const unsigned same = __match_any_sync(0xffffffffu, bin);
    if (bin < Bins && threadIdx.x % 32 == static_cast<unsigned>(__ffs(same) - 1))
      atomicAdd(&block_counts[bin], static_cast<unsigned>(__popc(same)));
  }
  __syncthreads();
  for (unsigned b = threadIdx.x; b < Bins; b += blockDim.x)
    if (block_counts[b] != 0) atomicAdd(&counts[b], static_cast<unsigned long long>(block_counts[b]));
}

template <DType D>
__global__ void exponent_counts_kernel(const void* data, std::size_t elements, bool aligned, double largest,
                                       Magnitudes* magnitudes) {
  count_bins<detail::kExponentBins>(elements, magnitudes->exponent_counts, [&](std::size_t i) {
    const double v = detail::element(data, i, D, aligned);
    return detail::counts_toward_scale(v, largest) ? detail::exponent_bin(detail::magnitude_bits(v))
                                                   : detail::kExponentBins;
  });
}

using BinScan = cub::BlockScan<unsigned long long, kThreads>;

// After exponent_counts_kernel on the same stream, one block: where the median is. Each thread holds
// a run of bins and their sum; a scan of the sums gives each run's first rank, and the thread whose
// run holds the median's rank finds its bin. No thread walks the bins alone: one thread's loop of
// dependent reads took tens of microseconds.
__global__ void median_exponent_kernel(Magnitudes* magnitudes) {
  constexpr unsigned kPerThread = detail::kExponentBins / kThreads;
  static_assert(detail::kExponentBins % kThreads == 0, "the bins split evenly over the threads");
  __shared__ BinScan::TempStorage scan;
  const unsigned first = threadIdx.x * kPerThread;
  unsigned long long counts[kPerThread], run = 0;
  for (unsigned k = 0; k < kPerThread; ++k) run += counts[k] = magnitudes->exponent_counts[first + k];
  unsigned long long before = 0, counted = 0;
  BinScan(scan).ExclusiveSum(run, before, counted);
  if (threadIdx.x == 0) magnitudes->counted = counted;
  if (counted == 0) return;
  unsigned long long rank = detail::median_rank(counted);
  if (rank < before || rank - before >= run) return;  // another thread's run holds it
  rank -= before;
  magnitudes->exponent = first + detail::bin_of_rank(counts, kPerThread, rank);
  magnitudes->rank_in_bin = rank;
}

// After median_exponent_kernel on the same stream: the mantissa bins of the median's exponent.
template <DType D>
__global__ void mantissa_counts_kernel(const void* data, std::size_t elements, bool aligned, double largest,
                                       Magnitudes* magnitudes) {
  if (magnitudes->counted == 0) return;
  const auto exponent = static_cast<unsigned>(magnitudes->exponent);
  count_bins<detail::kMantissaBins>(elements, magnitudes->mantissa_counts, [&](std::size_t i) {
    const double v = detail::element(data, i, D, aligned);
    if (!detail::counts_toward_scale(v, largest)) return detail::kMantissaBins;
    const std::uint64_t bits = detail::magnitude_bits(v);
    return detail::exponent_bin(bits) == exponent ? detail::mantissa_bin(bits) : detail::kMantissaBins;
  });
}

// After mantissa_counts_kernel on the same stream, one block: atol plus rtol times the typical
// magnitude, as the host adds them (no fused multiply-add). A thread per mantissa bin; a scan of
// their counts finds the bin of the median's rank in its exponent.
__global__ void scaled_atol_kernel(const Magnitudes* magnitudes, double atol, double rtol, Totals* totals) {
  static_assert(detail::kMantissaBins == kThreads, "a thread per mantissa bin");
  double scale = 0;
  if (magnitudes->counted != 0) {  // the same for the whole block, so all of it reaches the barriers
    __shared__ BinScan::TempStorage scan;
    __shared__ unsigned median_bin;
    // As detail::bin_of_rank, the last bin where the counts hold no such rank (the data changed
    // between the two passes).
    if (threadIdx.x == 0) median_bin = detail::kMantissaBins - 1;
    __syncthreads();
    const unsigned long long count = magnitudes->mantissa_counts[threadIdx.x], rank = magnitudes->rank_in_bin;
    unsigned long long before = 0;
    BinScan(scan).ExclusiveSum(count, before);
    if (rank >= before && rank - before < count) median_bin = threadIdx.x;
    __syncthreads();
    scale = detail::bin_magnitude(static_cast<unsigned>(magnitudes->exponent), median_bin);
  }
  if (threadIdx.x == 0) totals->atol = __dadd_rn(atol, __dmul_rn(rtol, scale));
}

// The tensors of one checksum launch: blockIdx.y picks the tensor, so one launch serves a batch.
struct ChecksumJob {
  const void* data;
  std::size_t bytes;
  bool aligned;
};
constexpr unsigned kChecksumsPerLaunch = 32;
struct ChecksumJobs {
  ChecksumJob job[kChecksumsPerLaunch];
};

// `value` combined over the block, in thread 0 (every thread calls it; `identity` combines with
// anything to that thing). One add per block into a result in global memory instead of one per warp:
// adds into the same word queue behind each other.
template <class Combine>
__device__ unsigned long long across_block(unsigned long long value, unsigned long long identity, Combine combine) {
  __shared__ unsigned long long warp_values[kThreads / 32];
  value = across_warp(value, combine);
  __syncthreads();  // an earlier call's readers are done with warp_values
  if (warp_leader()) warp_values[threadIdx.x / 32] = value;
  __syncthreads();
  value = threadIdx.x < kThreads / 32 ? warp_values[threadIdx.x] : identity;
  return threadIdx.x < 32 ? across_warp(value, combine) : identity;
}

struct Sum {
  __device__ unsigned long long operator()(unsigned long long a, unsigned long long b) const { return sum(a, b); }
};
struct Larger {
  __device__ unsigned long long operator()(unsigned long long a, unsigned long long b) const { return larger(a, b); }
};
struct Smaller {
  __device__ unsigned long long operator()(unsigned long long a, unsigned long long b) const { return smaller(a, b); }
};

// sums[blockIdx.y] += tensor blockIdx.y's checksum; one atomic per block.
__global__ void checksums_kernel(ChecksumJobs jobs, unsigned long long* sums) {
  const ChecksumJob& job = jobs.job[blockIdx.y];
  const std::size_t words = (job.bytes + 7) / 8;
  unsigned long long mixed = 0;
  for (std::size_t w = first_item(); w < words; w += item_stride())
    mixed += detail::mixed_word(detail::word_at(job.data, job.bytes, w, job.aligned), w);
  mixed = across_block(mixed, 0ull, Sum{});
  if (threadIdx.x == 0 && mixed != 0) atomicAdd(&sums[blockIdx.y], mixed);
}

// `found_atol`: where scaled_atol_kernel put this pair's atol (null: `atol` is it).
template <DType D>
__global__ void compare_kernel(const void* candidate, const void* reference, std::size_t elements,
                               std::size_t element_bytes, bool aligned, bool exact_bits, double atol,
                               const double* found_atol, double rtol, double largest, Totals* totals) {
  if (found_atol) atol = *found_atol;
  unsigned long long mismatched = 0, max_abs = 0, max_rel = 0, first = ULLONG_MAX;
  for (std::size_t i = first_item(); i < elements; i += item_stride()) {
    // max_rel holds this thread's largest relative error so far (errors are never negative, so
    // their bits order as they do), which lets judge divide only where it could grow.
    detail::ElementVerdict v =
        detail::judge(detail::element(candidate, i, D, aligned), detail::element(reference, i, D, aligned), atol,
                      rtol, largest, __longlong_as_double(static_cast<long long>(max_rel)));
    if (exact_bits) v.passes = detail::same_bits(candidate, reference, i, element_bytes, aligned);
    max_abs = larger(max_abs, error_bits(v.abs_error));
    max_rel = larger(max_rel, error_bits(v.rel_error));
    if (!v.passes && mismatched++ == 0) first = i;  // a thread's indices only grow
  }
  mismatched = across_block(mismatched, 0ull, Sum{});
  max_abs = across_block(max_abs, 0ull, Larger{});
  max_rel = across_block(max_rel, 0ull, Larger{});
  first = across_block(first, ULLONG_MAX, Smaller{});
  if (threadIdx.x != 0) return;
  if (mismatched > 0) {
    atomicAdd(&totals->mismatched, mismatched);
    atomicMin(&totals->first_mismatch, first);
  }
  if (max_abs != 0) atomicMax(&totals->max_abs_error_bits, max_abs);
  if (max_rel != 0) atomicMax(&totals->max_rel_error_bits, max_rel);
}

// After compare_kernel on the same stream: the bytes of both sides' first mismatching element.
__global__ void first_mismatch_kernel(const void* candidate, const void* reference, std::size_t element_bytes,
                                      Totals* totals) {
  if (first_item() != 0 || totals->first_mismatch == ULLONG_MAX) return;
  const std::size_t offset = element_bytes * totals->first_mismatch;
  for (std::size_t b = 0; b < element_bytes; ++b) {
    totals->first_candidate[b] = static_cast<const unsigned char*>(candidate)[offset + b];
    totals->first_reference[b] = static_cast<const unsigned char*>(reference)[offset + b];
  }
}

// Blocks for `items` (at most kMaxBlocks; the threads stride over the rest).
unsigned blocks_for(std::size_t items) {
  return static_cast<unsigned>(std::clamp<std::size_t>((items + kThreads - 1) / kThreads, 1, kMaxBlocks));
}

// Launches `kernel` on `grid` on the legacy default stream. cudaLaunchKernel returns this launch's
// own error, never one the caller's code left pending.
template <class... Params, class... Args>
void launch_grid(void (*kernel)(Params...), dim3 grid, const char* what, Args... args) {
  std::tuple<Params...> values{args...};
  std::apply(
      [&](auto&... value) {
        void* params[] = {&value...};
        check_cuda(cudaLaunchKernel(reinterpret_cast<const void*>(kernel), grid, dim3(kThreads), params, 0,
                                    cudaStreamLegacy),
                   what);
      },
      values);
}

// Launches `kernel` over `items`.
template <class... Params, class... Args>
void launch(void (*kernel)(Params...), std::size_t items, const char* what, Args... args) {
  launch_grid(kernel, dim3(blocks_for(items)), what, args...);
}

// Calls `launch` with `dtype` as a compile-time constant (std::integral_constant<DType, ...>): the
// kernels it picks then read their elements without a switch on the dtype per element.
template <class Launch>
void with_dtype(DType dtype, Launch&& launch) {
  switch (dtype) {
    case DType::f64: return launch(std::integral_constant<DType, DType::f64>{});
    case DType::f32: return launch(std::integral_constant<DType, DType::f32>{});
    case DType::f16: return launch(std::integral_constant<DType, DType::f16>{});
    case DType::bf16: return launch(std::integral_constant<DType, DType::bf16>{});
    case DType::f8_e4m3: return launch(std::integral_constant<DType, DType::f8_e4m3>{});
    case DType::f8_e5m2: return launch(std::integral_constant<DType, DType::f8_e5m2>{});
    case DType::i64: return launch(std::integral_constant<DType, DType::i64>{});
    case DType::i32: return launch(std::integral_constant<DType, DType::i32>{});
    case DType::i16: return launch(std::integral_constant<DType, DType::i16>{});
    case DType::i8: return launch(std::integral_constant<DType, DType::i8>{});
    case DType::u64: return launch(std::integral_constant<DType, DType::u64>{});
    case DType::u32: return launch(std::integral_constant<DType, DType::u32>{});
    case DType::u16: return launch(std::integral_constant<DType, DType::u16>{});
    case DType::u8: return launch(std::integral_constant<DType, DType::u8>{});
    case DType::boolean: return launch(std::integral_constant<DType, DType::boolean>{});
  }
  throw InternalError("the device comparison was given a dtype it does not know (" +
                      std::to_string(static_cast<int>(dtype)) + "; kscope bug: please report it with this message)");
}

// Whether `data` is a multiple of `size`: the kernels then read whole elements (or words) in one load.
bool aligned_to(const void* data, std::size_t size) { return reinterpret_cast<std::uintptr_t>(data) % size == 0; }

std::string address_text(const void* p) {
  char text[32];
  std::snprintf(text, sizeof text, "%p", p);
  return text;
}

// Refuses, naming the fix, memory the current device cannot read: a kernel reading it would fault
// and leave the CUDA context unusable.
void check_readable(const TensorView& tensor) {
  cudaPointerAttributes where{};
  check_cuda(cudaPointerGetAttributes(&where, tensor.data), "cudaPointerGetAttributes");
  int device = 0;
  check_cuda(cudaGetDevice(&device), "cudaGetDevice");
  if (where.type == cudaMemoryTypeUnregistered) {
    int pageable_access = 0;
    check_cuda(cudaDeviceGetAttribute(&pageable_access, cudaDevAttrPageableMemoryAccess, device),
               "cudaDeviceGetAttribute(cudaDevAttrPageableMemoryAccess)");
    if (!pageable_access)
      throw ConfigError("a tensor given as device memory (" + tensor.describe() + ") points at host memory (" +
                        address_text(tensor.data) + ") that the GPU cannot read: give it as host memory, which "
                        "kscope reads itself, or copy it to the device");
  }
  if (where.type == cudaMemoryTypeDevice && where.device != device)
    throw ConfigError("a tensor (" + tensor.describe() + ") is in the memory of device " + std::to_string(where.device) +
                      ", and kscope measures device " + std::to_string(device) + ": make the tensors on the measured device");
}

// Zeroes `sums`, then adds each tensor's checksum into its own: one launch per kChecksumsPerLaunch
// tensors, once the device is known to read them.
void launch_checksums(const std::vector<TensorView>& tensors, unsigned long long* sums) {
  check_cuda(cudaMemsetAsync(sums, 0, tensors.size() * sizeof *sums, cudaStreamLegacy),
             "cudaMemsetAsync(kscope's checksums)");
  for (std::size_t first = 0; first < tensors.size(); first += kChecksumsPerLaunch) {
    const std::size_t count = std::min<std::size_t>(kChecksumsPerLaunch, tensors.size() - first);
    ChecksumJobs jobs{};
    std::size_t most_words = 0;
    for (std::size_t k = 0; k < count; ++k) {
      const TensorView& t = tensors[first + k];
      if (t.bytes() == 0) continue;  // sums to 0, whatever its pointer
      check_readable(t);
      jobs.job[k] = {t.data, t.bytes(), aligned_to(t.data, 8)};
      most_words = std::max(most_words, (t.bytes() + 7) / 8);
    }
    launch_grid(checksums_kernel, dim3(blocks_for(most_words), static_cast<unsigned>(count)),
                "launching kscope's checksums", jobs, sums + first);
  }
}

}  // namespace

GpuTensorChecks::~GpuTensorChecks() = default;

template <class T>
GpuTensorChecks::Buffers<T>::~Buffers() {
  if (device) cudaFree(device);
  if (host) cudaFreeHost(host);
}

template <class T>
void GpuTensorChecks::Buffers<T>::reserve(std::size_t count) {
  if (count <= capacity) return;
  if (device) cudaFree(std::exchange(device, nullptr));
  if (host) cudaFreeHost(std::exchange(host, nullptr));
  capacity = 0;
  check_cuda(cudaMalloc(&device, count * sizeof(T)), "cudaMalloc(kscope's tensor check results)");
  check_cuda(cudaHostAlloc(&host, count * sizeof(T), cudaHostAllocDefault),
             "cudaHostAlloc(kscope's tensor check results)");
  capacity = count;
}

GpuTensorChecks::Pool& GpuTensorChecks::pool() {
  if (pool_) return *pool_;
  int device = 0;
  check_cuda(cudaGetDevice(&device), "cudaGetDevice");
  static std::mutex mutex;
  static std::map<int, Pool*> pools;  // never freed: CUDA may be gone when statics are destroyed
  const std::lock_guard lock(mutex);
  Pool*& found = pools[device];
  if (!found) {
    int sms = 0, threads_per_sm = 0;
    check_cuda(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device),
               "cudaDeviceGetAttribute(cudaDevAttrMultiProcessorCount)");
    check_cuda(cudaDeviceGetAttribute(&threads_per_sm, cudaDevAttrMaxThreadsPerMultiProcessor, device),
               "cudaDeviceGetAttribute(cudaDevAttrMaxThreadsPerMultiProcessor)");
    found = new Pool;
    found->resident_blocks = static_cast<unsigned>(std::max(sms * (threads_per_sm / static_cast<int>(kThreads)), 1));
  }
  return *(pool_ = found);
}

std::vector<std::uint64_t> GpuTensorChecks::checksums(const std::vector<TensorView>& tensors) {
  if (tensors.empty()) return {};
  Buffers<unsigned long long>& sums = pool().sums;
  sums.reserve(tensors.size());
  launch_checksums(tensors, sums.device);
  check_cuda(cudaMemcpyAsync(sums.host, sums.device, tensors.size() * sizeof *sums.host, cudaMemcpyDeviceToHost,
                             cudaStreamLegacy),
             "cudaMemcpyAsync(kscope's checksums)");
  check_cuda(cudaStreamSynchronize(cudaStreamLegacy), "cudaStreamSynchronize(kscope's checksums)");
  return {sums.host, sums.host + tensors.size()};
}

void GpuTensorChecks::start_checksums(const std::vector<TensorView>& tensors) {
  if (tensors.empty()) return;
  Buffers<unsigned long long>& started = pool().started;
  if (started_count_ + tensors.size() > started.capacity) {
    keep_started();  // rare (the first runs): the buffers grow only while nothing is in flight
    started.reserve(std::max(2 * started.capacity, tensors.size()));
  }
  unsigned long long* sums = started.device + started_count_;
  launch_checksums(tensors, sums);
  check_cuda(cudaMemcpyAsync(started.host + started_count_, sums, tensors.size() * sizeof *sums,
                             cudaMemcpyDeviceToHost, cudaStreamLegacy),
             "cudaMemcpyAsync(kscope's checksums)");
  started_count_ += tensors.size();
}

void GpuTensorChecks::keep_started() {
  if (started_count_ == 0) return;
  check_cuda(cudaStreamSynchronize(cudaStreamLegacy), "cudaStreamSynchronize(kscope's checksums)");
  const unsigned long long* sums = pool().started.host;
  finished_.insert(finished_.end(), sums, sums + started_count_);
  started_count_ = 0;
}

std::vector<std::uint64_t> GpuTensorChecks::finish_checksums() {
  keep_started();
  return std::exchange(finished_, {});
}

std::vector<TensorComparison> GpuTensorChecks::compare(const std::vector<TensorView>& candidates,
                                                    const std::vector<TensorView>& references,
                                                    const std::vector<Tolerance>& tolerances) {
  if (candidates.size() != references.size() || tolerances.size() != references.size())
    throw InternalError("the device comparison was given " + std::to_string(candidates.size()) + " candidates, " +
                        std::to_string(references.size()) + " references and " + std::to_string(tolerances.size()) +
                        " tolerances (kscope bug: please report it with this message)");
  const std::size_t count = references.size();
  std::vector<TensorComparison> out(count);
  if (count == 0) return out;
  Pool& buffers = pool();
  buffers.totals.reserve(count);
  buffers.magnitudes.reserve(count);
  Totals* totals = buffers.totals.device;
  Magnitudes* magnitudes = buffers.magnitudes.device;
  const char* what = "launching kscope's comparison";
  launch(fresh_totals_kernel, count, what, totals, count);
  check_cuda(cudaMemsetAsync(magnitudes, 0, count * sizeof *magnitudes, cudaStreamLegacy),
             "cudaMemsetAsync(kscope's typical magnitudes)");
  for (std::size_t i = 0; i < count; ++i) {
    const TensorView& c = candidates[i];
    const TensorView& r = references[i];
    const Tolerance& t = tolerances[i];
    out[i].elements = r.elements();
    out[i].atol = t.atol;
    if (out[i].elements == 0) continue;
    check_readable(c);
    check_readable(r);
    const std::size_t element_bytes = size_of(r.dtype);
    const double largest = detail::largest_finite(r.dtype);
    const dim3 reducing(std::min(blocks_for(r.elements()), buffers.resident_blocks));
    const bool exact_bits = !is_floating(r.dtype) && t.atol == 0 && t.rtol == 0;  // as detail::host_compare
    with_dtype(r.dtype, [&](auto dtype) {
      constexpr DType kDType = decltype(dtype)::value;
      const double* found_atol = nullptr;
      if (t.add_scaled_magnitude) {  // the reference's typical magnitude, then the atol it gives
        const bool aligned = aligned_to(r.data, element_bytes);
        launch_grid(exponent_counts_kernel<kDType>, reducing, what, r.data, r.elements(), aligned, largest,
                    magnitudes + i);
        launch_grid(median_exponent_kernel, dim3(1), what, magnitudes + i);
        launch_grid(mantissa_counts_kernel<kDType>, reducing, what, r.data, r.elements(), aligned, largest,
                    magnitudes + i);
        launch_grid(scaled_atol_kernel, dim3(1), what, static_cast<const Magnitudes*>(magnitudes + i), t.atol, t.rtol,
                    totals + i);
        found_atol = &totals[i].atol;
      }
      const bool aligned = aligned_to(c.data, element_bytes) && aligned_to(r.data, element_bytes);
      launch_grid(compare_kernel<kDType>, reducing, what, c.data, r.data, out[i].elements, element_bytes, aligned,
                  exact_bits, t.atol, found_atol, t.rtol, largest, totals + i);
    });
    launch(first_mismatch_kernel, 1, what, c.data, r.data, element_bytes, totals + i);
  }
  check_cuda(cudaMemcpyAsync(buffers.totals.host, totals, count * sizeof(Totals), cudaMemcpyDeviceToHost,
                             cudaStreamLegacy),
             "cudaMemcpyAsync(kscope's comparisons)");
  check_cuda(cudaStreamSynchronize(cudaStreamLegacy), "cudaStreamSynchronize(kscope's comparisons)");
  for (std::size_t i = 0; i < count; ++i) {
    if (out[i].elements == 0) continue;
    const Totals& found = buffers.totals.host[i];
    if (tolerances[i].add_scaled_magnitude) out[i].atol = found.atol;
    out[i].mismatched = found.mismatched;
    out[i].max_abs_error = std::bit_cast<double>(found.max_abs_error_bits);
    out[i].max_rel_error = std::bit_cast<double>(found.max_rel_error_bits);
    if (found.mismatched == 0) continue;
    out[i].first_mismatch = found.first_mismatch;
    // Decoded as the host decodes elements.
    out[i].first_candidate = detail::element(found.first_candidate, 0, candidates[i].dtype);
    out[i].first_reference = detail::element(found.first_reference, 0, references[i].dtype);
  }
  return out;
}

}  // namespace kscope::device

#include "device/gpu_tensor_checks.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <bit>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <tuple>
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
  unsigned long long checksum;        // modulo 2^64, as the host's
  // The first mismatching element of each side, as its bytes.
  unsigned char first_candidate[8];
  unsigned char first_reference[8];
};

// One tensor's typical magnitude (core/model/tensor_elements.hpp's rule): the median's place and the
// counts of its exponent's mantissa bins, which are read back, then the counts by exponent.
struct GpuTensorChecks::Magnitudes {
  unsigned long long counted;      // the elements that count toward the scale
  unsigned long long exponent;     // the exponent bin holding their median
  unsigned long long rank_in_bin;  // the median's rank within that bin
  unsigned long long mantissa_counts[detail::kMantissaBins];
  unsigned long long exponent_counts[detail::kExponentBins];  // not read back
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

__global__ void fresh_magnitudes_kernel(Magnitudes* magnitudes, std::size_t count) {
  auto* words = reinterpret_cast<unsigned long long*>(magnitudes);
  const std::size_t total = count * (sizeof(Magnitudes) / sizeof(unsigned long long));
  for (std::size_t i = first_item(); i < total; i += item_stride()) words[i] = 0;
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

__global__ void exponent_counts_kernel(const void* data, std::size_t elements, DType dtype, bool aligned,
                                       double largest, Magnitudes* magnitudes) {
  count_bins<detail::kExponentBins>(elements, magnitudes->exponent_counts, [&](std::size_t i) {
    const double v = detail::element(data, i, dtype, aligned);
    return detail::counts_toward_scale(v, largest) ? detail::exponent_bin(detail::magnitude_bits(v))
                                                   : detail::kExponentBins;
  });
}

// After exponent_counts_kernel on the same stream, one block: where the median is. Each thread sums
// its run of bins; the first finds the run, then the bin, that holds the median.
__global__ void median_exponent_kernel(Magnitudes* magnitudes) {
  constexpr unsigned kPerThread = detail::kExponentBins / kThreads;
  static_assert(detail::kExponentBins % kThreads == 0, "the bins split evenly over the threads");
  __shared__ unsigned long long run_counts[kThreads];
  const unsigned first = threadIdx.x * kPerThread;
  unsigned long long sum = 0;
  for (unsigned b = first; b < first + kPerThread; ++b) sum += magnitudes->exponent_counts[b];
  run_counts[threadIdx.x] = sum;
  __syncthreads();
  if (threadIdx.x != 0) return;
  unsigned long long counted = 0;
  for (unsigned t = 0; t < kThreads; ++t) counted += run_counts[t];
  magnitudes->counted = counted;
  if (counted == 0) return;
  unsigned long long rank = detail::median_rank(counted);
  unsigned run = 0;
  while (rank >= run_counts[run]) rank -= run_counts[run++];
  const unsigned start = run * kPerThread;
  magnitudes->exponent = start + detail::bin_of_rank(magnitudes->exponent_counts + start, kPerThread, rank);
  magnitudes->rank_in_bin = rank;
}

// After median_exponent_kernel on the same stream: the mantissa bins of the median's exponent.
__global__ void mantissa_counts_kernel(const void* data, std::size_t elements, DType dtype, bool aligned,
                                       double largest, Magnitudes* magnitudes) {
  if (magnitudes->counted == 0) return;
  const auto exponent = static_cast<unsigned>(magnitudes->exponent);
  count_bins<detail::kMantissaBins>(elements, magnitudes->mantissa_counts, [&](std::size_t i) {
    const double v = detail::element(data, i, dtype, aligned);
    if (!detail::counts_toward_scale(v, largest)) return detail::kMantissaBins;
    const std::uint64_t bits = detail::magnitude_bits(v);
    return detail::exponent_bin(bits) == exponent ? detail::mantissa_bin(bits) : detail::kMantissaBins;
  });
}

__global__ void checksum_kernel(const void* data, std::size_t bytes, bool aligned, Totals* totals) {
  const std::size_t words = (bytes + 7) / 8;
  unsigned long long mixed = 0;
  for (std::size_t w = first_item(); w < words; w += item_stride())
    mixed += detail::mixed_word(detail::word_at(data, bytes, w, aligned), w);
  mixed = across_warp(mixed, [](auto a, auto b) { return sum(a, b); });
  if (warp_leader()) atomicAdd(&totals->checksum, mixed);
}

__global__ void compare_kernel(const void* candidate, const void* reference, std::size_t elements, DType dtype,
                               std::size_t element_bytes, bool aligned, bool exact_bits, double atol, double rtol,
                               double largest, Totals* totals) {
  unsigned long long mismatched = 0, max_abs = 0, max_rel = 0, first = ULLONG_MAX;
  for (std::size_t i = first_item(); i < elements; i += item_stride()) {
    detail::ElementVerdict v = detail::judge(detail::element(candidate, i, dtype, aligned),
                                             detail::element(reference, i, dtype, aligned), atol, rtol, largest);
    if (exact_bits) v.passes = detail::same_bits(candidate, reference, i, element_bytes, aligned);
    max_abs = larger(max_abs, error_bits(v.abs_error));
    max_rel = larger(max_rel, error_bits(v.rel_error));
    if (!v.passes && mismatched++ == 0) first = i;  // a thread's indices only grow
  }
  mismatched = across_warp(mismatched, [](auto a, auto b) { return sum(a, b); });
  max_abs = across_warp(max_abs, [](auto a, auto b) { return larger(a, b); });
  max_rel = across_warp(max_rel, [](auto a, auto b) { return larger(a, b); });
  first = across_warp(first, [](auto a, auto b) { return smaller(a, b); });
  if (!warp_leader()) return;
  if (mismatched > 0) {
    atomicAdd(&totals->mismatched, mismatched);
    atomicMin(&totals->first_mismatch, first);
  }
  atomicMax(&totals->max_abs_error_bits, max_abs);
  atomicMax(&totals->max_rel_error_bits, max_rel);
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

// Launches `kernel` over `items` (at most kMaxBlocks blocks) on the legacy default stream.
// cudaLaunchKernel returns this launch's own error, never one the caller's code left pending.
template <class... Params, class... Args>
void launch(void (*kernel)(Params...), std::size_t items, const char* what, Args... args) {
  std::tuple<Params...> values{args...};
  const auto blocks = static_cast<unsigned>(std::clamp<std::size_t>((items + kThreads - 1) / kThreads, 1, kMaxBlocks));
  std::apply(
      [&](auto&... value) {
        void* params[] = {&value...};
        check_cuda(cudaLaunchKernel(reinterpret_cast<const void*>(kernel), dim3(blocks), dim3(kThreads), params, 0,
                                    cudaStreamLegacy),
                   what);
      },
      values);
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

// launch_one(tensor, its results) for each non-empty tensor, once the device is known to read it.
template <class Results, class LaunchOne>
void launch_each(const std::vector<TensorView>& tensors, Results* results, LaunchOne launch_one) {
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    if (tensors[i].elements() == 0) continue;
    check_readable(tensors[i]);
    launch_one(tensors[i], results + i);
  }
}

void launch_checksum(const TensorView& t, Totals* totals) {
  launch(checksum_kernel, (t.bytes() + 7) / 8, "launching kscope's checksum", t.data, t.bytes(), aligned_to(t.data, 8),
         totals);
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

Totals* GpuTensorChecks::fresh_totals(std::size_t count) {
  totals_.reserve(count);
  launch(fresh_totals_kernel, count, "launching kscope's tensor check totals", totals_.device, count);
  return totals_.device;
}

const Totals* GpuTensorChecks::read_totals(std::size_t count) {
  check_cuda(cudaMemcpyAsync(totals_.host, totals_.device, count * sizeof(Totals), cudaMemcpyDeviceToHost,
                             cudaStreamLegacy),
             "cudaMemcpyAsync(kscope's tensor check totals)");
  check_cuda(cudaStreamSynchronize(cudaStreamLegacy), "cudaStreamSynchronize(kscope's tensor checks)");
  return totals_.host;
}

template <class Result, class LaunchOne, class ReadOne>
std::vector<Result> GpuTensorChecks::per_tensor(const std::vector<TensorView>& tensors, LaunchOne launch_one,
                                             ReadOne read_one) {
  std::vector<Result> out(tensors.size(), Result{});
  if (tensors.empty()) return out;
  launch_each(tensors, fresh_totals(tensors.size()), launch_one);
  const Totals* read = read_totals(tensors.size());
  for (std::size_t i = 0; i < tensors.size(); ++i) out[i] = read_one(read[i]);
  return out;
}

std::vector<double> GpuTensorChecks::typical_magnitudes(const std::vector<TensorView>& tensors) {
  std::vector<double> out(tensors.size(), 0.0);
  if (tensors.empty()) return out;
  magnitudes_.reserve(tensors.size());
  const char* what = "launching kscope's typical magnitude";
  launch(fresh_magnitudes_kernel, tensors.size() * (sizeof(Magnitudes) / sizeof(unsigned long long)), what,
         magnitudes_.device, tensors.size());
  launch_each(tensors, magnitudes_.device, [&](const TensorView& t, Magnitudes* mine) {
    const bool aligned = aligned_to(t.data, size_of(t.dtype));
    const double largest = detail::largest_finite(t.dtype);
    launch(exponent_counts_kernel, t.elements(), what, t.data, t.elements(), t.dtype, aligned, largest, mine);
    launch(median_exponent_kernel, kThreads, what, mine);  // one block
    launch(mantissa_counts_kernel, t.elements(), what, t.data, t.elements(), t.dtype, aligned, largest, mine);
  });
  // Each tensor's fields up to its exponent counts, which stay on the device.
  check_cuda(cudaMemcpy2DAsync(magnitudes_.host, sizeof(Magnitudes), magnitudes_.device, sizeof(Magnitudes),
                               offsetof(Magnitudes, exponent_counts), tensors.size(), cudaMemcpyDeviceToHost,
                               cudaStreamLegacy),
             "cudaMemcpy2DAsync(kscope's typical magnitudes)");
  check_cuda(cudaStreamSynchronize(cudaStreamLegacy), "cudaStreamSynchronize(kscope's tensor checks)");
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    const Magnitudes& found = magnitudes_.host[i];
    if (found.counted == 0) continue;
    unsigned long long rank = found.rank_in_bin;
    out[i] = detail::bin_magnitude(static_cast<unsigned>(found.exponent),
                                   detail::bin_of_rank(found.mantissa_counts, detail::kMantissaBins, rank));
  }
  return out;
}

std::vector<std::uint64_t> GpuTensorChecks::checksums(const std::vector<TensorView>& tensors) {
  return per_tensor<std::uint64_t>(tensors, launch_checksum,
                                   [](const Totals& totals) { return std::uint64_t{totals.checksum}; });
}

void GpuTensorChecks::start_checksums(const std::vector<TensorView>& tensors) {
  if (tensors.empty()) return;
  if (started_count_ + tensors.size() > started_.capacity) {
    keep_started();  // rare (the first runs): the buffers grow only while nothing is in flight
    started_.reserve(std::max(2 * started_.capacity, tensors.size()));
  }
  Totals* totals = started_.device + started_count_;
  launch(fresh_totals_kernel, tensors.size(), "launching kscope's tensor check totals", totals, tensors.size());
  launch_each(tensors, totals, launch_checksum);
  check_cuda(cudaMemcpyAsync(started_.host + started_count_, totals, tensors.size() * sizeof(Totals),
                             cudaMemcpyDeviceToHost, cudaStreamLegacy),
             "cudaMemcpyAsync(kscope's checksums)");
  started_count_ += tensors.size();
}

void GpuTensorChecks::keep_started() {
  if (started_count_ == 0) return;
  check_cuda(cudaStreamSynchronize(cudaStreamLegacy), "cudaStreamSynchronize(kscope's checksums)");
  for (std::size_t i = 0; i < started_count_; ++i) finished_.push_back(started_.host[i].checksum);
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
  std::vector<TensorComparison> out(references.size());
  if (references.empty()) return out;
  Totals* totals = fresh_totals(references.size());
  for (std::size_t i = 0; i < references.size(); ++i) {
    const TensorView& c = candidates[i];
    const TensorView& r = references[i];
    out[i].elements = r.elements();
    if (out[i].elements == 0) continue;
    check_readable(c);
    check_readable(r);
    const std::size_t element_bytes = size_of(r.dtype);
    const Tolerance& t = tolerances[i];
    const bool exact_bits = !is_floating(r.dtype) && t.atol == 0 && t.rtol == 0;  // as detail::host_compare
    const bool aligned = aligned_to(c.data, element_bytes) && aligned_to(r.data, element_bytes);
    launch(compare_kernel, out[i].elements, "launching kscope's comparison", c.data, r.data, out[i].elements, r.dtype,
           element_bytes, aligned, exact_bits, t.atol, t.rtol, detail::largest_finite(r.dtype), totals + i);
    launch(first_mismatch_kernel, 1, "launching kscope's comparison", c.data, r.data, element_bytes, totals + i);
  }
  const Totals* read = read_totals(references.size());
  for (std::size_t i = 0; i < references.size(); ++i) {
    if (out[i].elements == 0) continue;
    const Totals& found = read[i];
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

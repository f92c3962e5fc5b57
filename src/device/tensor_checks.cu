#include "device/tensor_checks.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <bit>
#include <climits>
#include <cstdio>
#include <tuple>

#include "core/tensor_elements.hpp"
#include "device/cuda_check.hpp"
#include "kscope/errors.hpp"

namespace kscope::device {

struct TensorChecks::Totals {
  unsigned long long mismatched = 0;
  // The largest errors, as the bits of the doubles: non-negative doubles order as their bits do.
  unsigned long long max_abs_error_bits = 0;
  unsigned long long max_rel_error_bits = 0;
  unsigned long long first_mismatch = ULLONG_MAX;
  unsigned long long checksum = 0;  // modulo 2^64, as the host's
  double sum_of_squares = 0;
};

namespace {

using Totals = TensorChecks::Totals;

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
__device__ double sum(double a, double b) { return a + b; }

// An error's bits for the running maximum: NaN counts as 0, as std::fmax ignores it on the host.
__device__ unsigned long long error_bits(double error) {
  return error != error ? 0ull : static_cast<unsigned long long>(__double_as_longlong(error));
}

__global__ void sum_of_squares_kernel(const void* data, std::size_t elements, DType dtype, Totals* totals) {
  double squares = 0;
  for (std::size_t i = first_item(); i < elements; i += item_stride()) {
    const double v = detail::element(data, i, dtype);
    if (std::isfinite(v)) squares += v * v;
  }
  squares = across_warp(squares, [](double a, double b) { return sum(a, b); });
  if (warp_leader()) atomicAdd(&totals->sum_of_squares, squares);
}

__global__ void compare_kernel(const void* candidate, const void* reference, std::size_t elements, DType dtype,
                               std::size_t element_bytes, bool exact_bits, double atol, double rtol, Totals* totals) {
  unsigned long long mismatched = 0, max_abs = 0, max_rel = 0, first = ULLONG_MAX;
  for (std::size_t i = first_item(); i < elements; i += item_stride()) {
    detail::ElementVerdict v =
        detail::judge(detail::element(candidate, i, dtype), detail::element(reference, i, dtype), atol, rtol);
    if (exact_bits) v.passes = detail::same_bits(candidate, reference, i, element_bytes);
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

__global__ void checksum_kernel(const void* data, std::size_t bytes, Totals* totals) {
  const std::size_t words = (bytes + 7) / 8;
  unsigned long long mixed = 0;
  for (std::size_t w = first_item(); w < words; w += item_stride())
    mixed += detail::mixed_word(detail::word_at(data, bytes, w), w);
  mixed = across_warp(mixed, [](auto a, auto b) { return sum(a, b); });
  if (warp_leader()) atomicAdd(&totals->checksum, mixed);
}

// Launches `kernel` over `items` on the legacy default stream. cudaLaunchKernel returns this
// launch's own error, never one the caller's code left pending.
template <class... Params, class... Args>
void launch(void (*kernel)(Params...), std::size_t items, const char* what, Args... args) {
  std::tuple<Params...> values{args...};
  const auto blocks = static_cast<unsigned>(std::min(kMaxBlocks, (items + kThreads - 1) / kThreads));
  std::apply(
      [&](auto&... value) {
        void* params[] = {&value...};
        check_cuda(cudaLaunchKernel(reinterpret_cast<const void*>(kernel), dim3(blocks), dim3(kThreads), params, 0,
                                    cudaStreamLegacy),
                   what);
      },
      values);
}

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

}  // namespace

TensorChecks::~TensorChecks() {
  if (totals_) cudaFree(totals_);
}

Totals* TensorChecks::fresh_totals() {
  if (!totals_) check_cuda(cudaMalloc(&totals_, sizeof(Totals)), "cudaMalloc(kscope's tensor check totals)");
  const Totals zero;
  check_cuda(cudaMemcpyAsync(totals_, &zero, sizeof zero, cudaMemcpyHostToDevice, cudaStreamLegacy),
             "cudaMemcpyAsync(kscope's tensor check totals)");
  return totals_;
}

Totals TensorChecks::read_totals() {
  Totals totals;
  check_cuda(cudaMemcpyAsync(&totals, totals_, sizeof totals, cudaMemcpyDeviceToHost, cudaStreamLegacy),
             "cudaMemcpyAsync(kscope's tensor check totals)");
  check_cuda(cudaStreamSynchronize(cudaStreamLegacy), "cudaStreamSynchronize(kscope's tensor check)");
  return totals;
}

double TensorChecks::sum_of_squares(const TensorView& tensor) {
  const std::size_t n = tensor.elements();
  if (n == 0) return 0;
  check_readable(tensor);
  launch(sum_of_squares_kernel, n, "launching kscope's sum of squares", tensor.data, n, tensor.dtype, fresh_totals());
  return read_totals().sum_of_squares;
}

TensorComparison TensorChecks::compare(const TensorView& candidate, const TensorView& reference, double atol,
                                       double rtol) {
  TensorComparison out;
  out.elements = reference.elements();
  if (out.elements == 0) return out;
  check_readable(candidate);
  check_readable(reference);
  const std::size_t element_bytes = size_of(reference.dtype);
  const bool exact_bits = !is_floating(reference.dtype) && atol == 0 && rtol == 0;  // as detail::host_compare
  launch(compare_kernel, out.elements, "launching kscope's comparison", candidate.data, reference.data, out.elements,
         reference.dtype, element_bytes, exact_bits, atol, rtol, fresh_totals());
  const Totals totals = read_totals();
  out.mismatched = totals.mismatched;
  out.max_abs_error = std::bit_cast<double>(totals.max_abs_error_bits);
  out.max_rel_error = std::bit_cast<double>(totals.max_rel_error_bits);
  if (out.mismatched == 0) return out;
  out.first_mismatch = totals.first_mismatch;
  // Its two elements, read back and decoded as the host decodes them.
  unsigned char c[8] = {}, r[8] = {};
  const std::size_t offset = element_bytes * out.first_mismatch;
  check_cuda(cudaMemcpy(c, static_cast<const unsigned char*>(candidate.data) + offset, element_bytes, cudaMemcpyDefault),
             "cudaMemcpy(the first mismatching element)");
  check_cuda(cudaMemcpy(r, static_cast<const unsigned char*>(reference.data) + offset, element_bytes, cudaMemcpyDefault),
             "cudaMemcpy(the first mismatching element)");
  out.first_candidate = detail::element(c, 0, candidate.dtype);
  out.first_reference = detail::element(r, 0, reference.dtype);
  return out;
}

std::uint64_t TensorChecks::checksum(const TensorView& tensor) {
  const std::size_t bytes = tensor.bytes();
  if (bytes == 0) return 0;
  check_readable(tensor);
  launch(checksum_kernel, (bytes + 7) / 8, "launching kscope's checksum", tensor.data, bytes, fresh_totals());
  return read_totals().checksum;
}

}  // namespace kscope::device

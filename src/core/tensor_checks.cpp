#include "core/tensor_checks.hpp"

#include <cmath>
#include <functional>

#include "core/tensor_elements.hpp"

namespace kscope::detail {

double host_sum_of_squares(const TensorView& tensor) {
  double sum = 0;
  const std::size_t n = tensor.elements();
  for (std::size_t i = 0; i < n; ++i) {
    const double v = element(tensor.data, i, tensor.dtype);
    if (std::isfinite(v)) sum += v * v;
  }
  return sum;
}

TensorComparison host_compare(const TensorView& candidate, const TensorView& reference, double atol, double rtol) {
  TensorComparison out;
  out.elements = reference.elements();
  const bool exact_bits = !is_floating(reference.dtype) && atol == 0 && rtol == 0;
  const std::size_t size = size_of(reference.dtype);
  for (std::size_t i = 0; i < out.elements; ++i) {
    const double c = element(candidate.data, i, candidate.dtype), r = element(reference.data, i, reference.dtype);
    ElementVerdict v = judge(c, r, atol, rtol);
    if (exact_bits) v.passes = same_bits(candidate.data, reference.data, i, size);
    out.max_abs_error = std::fmax(out.max_abs_error, v.abs_error);
    out.max_rel_error = std::fmax(out.max_rel_error, v.rel_error);
    if (v.passes) continue;
    if (out.mismatched++ == 0) {
      out.first_mismatch = i;
      out.first_candidate = c;
      out.first_reference = r;
    }
  }
  return out;
}

std::uint64_t host_checksum(const TensorView& tensor) {
  const std::size_t bytes = tensor.bytes();
  std::uint64_t sum = 0;
  for (std::size_t w = 0; w * 8 < bytes; ++w) sum += mixed_word(word_at(tensor.data, bytes, w), w);
  return sum;
}

double TensorChecks::root_mean_square(const TensorView& tensor) {
  const std::size_t n = tensor.elements();
  if (n == 0) return 0;
  const double sum = tensor.memory == MemorySpace::host ? host_sum_of_squares(tensor) : device_.sum_of_squares(tensor);
  return std::sqrt(sum / static_cast<double>(n));
}

TensorComparison TensorChecks::compare(const TensorView& candidate, const TensorView& reference, double atol,
                                       double rtol) {
  if (candidate.memory == MemorySpace::host && reference.memory == MemorySpace::host)
    return host_compare(candidate, reference, atol, rtol);
  return device_.compare(candidate, reference, atol, rtol);
}

std::uint64_t TensorChecks::checksum(const TensorView& tensor) {
  return tensor.memory == MemorySpace::host ? host_checksum(tensor) : device_.checksum(tensor);
}

bool overlaps(const TensorView& a, const TensorView& b) {
  if (a.memory != b.memory || a.bytes() == 0 || b.bytes() == 0) return false;
  const auto begin_a = reinterpret_cast<std::uintptr_t>(a.data), begin_b = reinterpret_cast<std::uintptr_t>(b.data);
  return begin_a < begin_b + b.bytes() && begin_b < begin_a + a.bytes();
}

}  // namespace kscope::detail

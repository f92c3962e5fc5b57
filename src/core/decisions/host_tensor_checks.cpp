#include "core/decisions/host_tensor_checks.hpp"

#include <cmath>
#include <utility>

#include "core/model/tensor_elements.hpp"

namespace kscope::detail {

double host_typical_magnitude(const TensorView& tensor) {
  const std::size_t n = tensor.elements();
  const double largest = largest_finite(tensor.dtype);
  std::vector<unsigned long long> exponents(kExponentBins), mantissas(kMantissaBins);
  std::uint64_t counted = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const double v = element(tensor.data, i, tensor.dtype);
    if (!counts_toward_scale(v, largest)) continue;
    ++exponents[exponent_bin(magnitude_bits(v))];
    ++counted;
  }
  if (counted == 0) return 0;
  unsigned long long rank = median_rank(counted);
  const unsigned exponent = bin_of_rank(exponents.data(), kExponentBins, rank);
  for (std::size_t i = 0; i < n; ++i) {
    const double v = element(tensor.data, i, tensor.dtype);
    if (!counts_toward_scale(v, largest)) continue;
    const std::uint64_t bits = magnitude_bits(v);
    if (exponent_bin(bits) == exponent) ++mantissas[mantissa_bin(bits)];
  }
  return bin_magnitude(exponent, bin_of_rank(mantissas.data(), kMantissaBins, rank));
}

TensorComparison host_compare(const TensorView& candidate, const TensorView& reference, double atol, double rtol) {
  TensorComparison out;
  out.elements = reference.elements();
  out.atol = atol;
  const bool exact_bits = !is_floating(reference.dtype) && atol == 0 && rtol == 0;
  const std::size_t size = size_of(reference.dtype);
  const double largest = largest_finite(reference.dtype);
  for (std::size_t i = 0; i < out.elements; ++i) {
    const double c = element(candidate.data, i, candidate.dtype), r = element(reference.data, i, reference.dtype);
    ElementVerdict v = judge(c, r, atol, rtol, largest);
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

TensorComparison host_compare(const TensorView& candidate, const TensorView& reference, const Tolerance& tolerance) {
  const double scale = tolerance.add_scaled_magnitude ? host_typical_magnitude(reference) : 0;
  return host_compare(candidate, reference, tolerance.atol + tolerance.rtol * scale, tolerance.rtol);
}

std::uint64_t host_checksum(const TensorView& tensor) {
  const std::size_t bytes = tensor.bytes();
  std::uint64_t sum = 0;
  for (std::size_t w = 0; w * 8 < bytes; ++w) sum += mixed_word(word_at(tensor.data, bytes, w), w);
  return sum;
}

std::vector<std::uint64_t> HostTensorChecks::checksums(const std::vector<TensorView>& tensors) {
  std::vector<std::uint64_t> out;
  for (const TensorView& t : tensors) out.push_back(host_checksum(t));
  return out;
}

void HostTensorChecks::start_checksums(const std::vector<TensorView>& tensors) {
  const std::vector<std::uint64_t> sums = checksums(tensors);
  started_.insert(started_.end(), sums.begin(), sums.end());
}

std::vector<std::uint64_t> HostTensorChecks::finish_checksums() { return std::exchange(started_, {}); }

std::vector<TensorComparison> HostTensorChecks::compare(const std::vector<TensorView>& candidates,
                                                        const std::vector<TensorView>& references,
                                                        const std::vector<Tolerance>& tolerances) {
  std::vector<TensorComparison> out;
  for (std::size_t i = 0; i < candidates.size(); ++i)
    out.push_back(host_compare(candidates[i], references[i], tolerances[i]));
  return out;
}

}  // namespace kscope::detail

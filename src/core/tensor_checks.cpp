#include "core/tensor_checks.hpp"

#include <cmath>
#include <utility>

#include "core/tensor_elements.hpp"

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

std::uint64_t host_checksum(const TensorView& tensor) {
  const std::size_t bytes = tensor.bytes();
  std::uint64_t sum = 0;
  for (std::size_t w = 0; w * 8 < bytes; ++w) sum += mixed_word(word_at(tensor.data, bytes, w), w);
  return sum;
}

namespace {

// Each tensor's result: host ones computed here, device ones by `device` in one batch.
template <typename Result, typename OnHost, typename OnDevice>
std::vector<Result> each(const std::vector<TensorView>& tensors, OnHost on_host, OnDevice on_device) {
  std::vector<Result> out(tensors.size());
  std::vector<TensorView> on_gpu;
  std::vector<std::size_t> where;
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    if (tensors[i].memory == MemorySpace::host) {
      out[i] = on_host(tensors[i]);
    } else {
      on_gpu.push_back(tensors[i]);
      where.push_back(i);
    }
  }
  if (!on_gpu.empty()) {
    const std::vector<Result> results = on_device(on_gpu);
    for (std::size_t k = 0; k < where.size(); ++k) out[where[k]] = results.at(k);
  }
  return out;
}

}  // namespace

std::vector<double> TensorChecks::typical_magnitudes(const std::vector<TensorView>& tensors) {
  return each<double>(tensors, host_typical_magnitude,
                      [&](const std::vector<TensorView>& v) { return device_.typical_magnitudes(v); });
}

std::vector<std::uint64_t> TensorChecks::checksums(const std::vector<TensorView>& tensors) {
  return each<std::uint64_t>(tensors, host_checksum,
                             [&](const std::vector<TensorView>& v) { return device_.checksums(v); });
}

void TensorChecks::start_checksums(const std::vector<TensorView>& tensors) {
  std::vector<TensorView> on_gpu;
  for (const TensorView& t : tensors) {
    if (t.memory == MemorySpace::host) {
      started_.emplace_back(host_checksum(t));
    } else {
      started_.emplace_back(std::nullopt);
      on_gpu.push_back(t);
    }
  }
  if (!on_gpu.empty()) device_.start_checksums(on_gpu);
}

std::vector<std::uint64_t> TensorChecks::finish_checksums() {
  const std::vector<std::optional<std::uint64_t>> started = std::exchange(started_, {});
  std::vector<std::uint64_t> from_gpu;
  for (const auto& value : started)
    if (!value) {
      from_gpu = device_.finish_checksums();
      break;
    }
  std::vector<std::uint64_t> out;
  std::size_t next = 0;
  for (const auto& value : started) out.push_back(value ? *value : from_gpu.at(next++));
  return out;
}

std::vector<TensorComparison> TensorChecks::compare(const std::vector<TensorView>& candidates,
                                                    const std::vector<TensorView>& references,
                                                    const std::vector<Tolerance>& tolerances) {
  std::vector<TensorComparison> out(candidates.size());
  std::vector<TensorView> gpu_candidates, gpu_references;
  std::vector<Tolerance> gpu_tolerances;
  std::vector<std::size_t> where;
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    if (references[i].memory == MemorySpace::host) {
      out[i] = host_compare(candidates[i], references[i], tolerances[i].atol, tolerances[i].rtol);
    } else {
      gpu_candidates.push_back(candidates[i]);
      gpu_references.push_back(references[i]);
      gpu_tolerances.push_back(tolerances[i]);
      where.push_back(i);
    }
  }
  if (!where.empty()) {
    const std::vector<TensorComparison> results = device_.compare(gpu_candidates, gpu_references, gpu_tolerances);
    for (std::size_t k = 0; k < where.size(); ++k) out[where[k]] = results.at(k);
  }
  return out;
}

bool overlaps(const TensorView& a, const TensorView& b) {
  if (a.memory != b.memory || a.bytes() == 0 || b.bytes() == 0) return false;
  const auto begin_a = reinterpret_cast<std::uintptr_t>(a.data), begin_b = reinterpret_cast<std::uintptr_t>(b.data);
  return begin_a < begin_b + b.bytes() && begin_b < begin_a + a.bytes();
}

}  // namespace kscope::detail

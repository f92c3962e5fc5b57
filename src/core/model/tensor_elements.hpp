#pragma once
// The element rules of kscope's tensor checks (kscope::TensorComparison, the checksum), defined once
// for the host (core/decisions/tensor_checks.cpp) and the GPU (device/tensor_checks.cu, compiled by nvcc).
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "kscope/tensor.hpp"

#ifdef __CUDACC__
#define KSCOPE_HOST_DEVICE __host__ __device__
#else
#define KSCOPE_HOST_DEVICE
#endif

namespace kscope::detail {

KSCOPE_HOST_DEVICE inline double bits_to_f32(std::uint32_t bits) {
  float f;
  memcpy(&f, &bits, sizeof f);
  return f;
}

// A small float of `exponent_bits` and `mantissa_bits` with IEEE's layout, bias and subnormals;
// `ieee_specials`: an all-ones exponent is an infinity or NaN (float16, float8_e5m2), else only
// all-ones exponent and mantissa is NaN and there is no infinity (float8_e4m3fn).
KSCOPE_HOST_DEVICE inline double small_float(std::uint32_t bits, int exponent_bits, int mantissa_bits,
                                             bool ieee_specials) {
  const std::uint32_t mantissa = bits & ((1u << mantissa_bits) - 1);
  const std::uint32_t exponent = (bits >> mantissa_bits) & ((1u << exponent_bits) - 1);
  const bool negative = (bits >> (mantissa_bits + exponent_bits)) & 1u;
  const std::uint32_t all_ones = (1u << exponent_bits) - 1;
  const int bias = (1 << (exponent_bits - 1)) - 1;
  double value;
  if (exponent == all_ones && ieee_specials) {
    value = mantissa == 0 ? INFINITY : NAN;
  } else if (exponent == all_ones && mantissa == (1u << mantissa_bits) - 1) {
    value = NAN;
  } else if (exponent == 0) {
    value = std::ldexp(static_cast<double>(mantissa), 1 - bias - mantissa_bits);
  } else {
    value = std::ldexp(static_cast<double>(mantissa | (1u << mantissa_bits)), static_cast<int>(exponent) - bias -
                                                                                  mantissa_bits);
  }
  return negative ? -value : value;
}

// Element i of a tensor of T, read as one load of a T where `aligned` says the data's address is a
// multiple of sizeof(T) (the GPU then reads it whole), else byte by byte (any address).
template <class T>
KSCOPE_HOST_DEVICE inline T load(const void* data, std::size_t i, bool aligned) {
  if (aligned) return static_cast<const T*>(data)[i];
  T v;
  memcpy(&v, static_cast<const unsigned char*>(data) + sizeof(T) * i, sizeof(T));
  return v;
}

// Element i of a tensor of this dtype, as a double (64-bit integers beyond 2^53 rounded).
// `aligned`: the data's address is a multiple of the dtype's size.
KSCOPE_HOST_DEVICE inline double element(const void* data, std::size_t i, DType dtype, bool aligned = false) {
  switch (dtype) {
    case DType::f64: return load<double>(data, i, aligned);
    case DType::f32: return load<float>(data, i, aligned);
    case DType::f16: return small_float(load<std::uint16_t>(data, i, aligned), 5, 10, true);
    case DType::bf16: return bits_to_f32(std::uint32_t{load<std::uint16_t>(data, i, aligned)} << 16);
    case DType::f8_e4m3: return small_float(load<std::uint8_t>(data, i, true), 4, 3, false);
    case DType::f8_e5m2: return small_float(load<std::uint8_t>(data, i, true), 5, 2, true);
    case DType::i64: return static_cast<double>(load<std::int64_t>(data, i, aligned));
    case DType::i32: return load<std::int32_t>(data, i, aligned);
    case DType::i16: return load<std::int16_t>(data, i, aligned);
    case DType::i8: return load<std::int8_t>(data, i, true);
    case DType::u64: return static_cast<double>(load<std::uint64_t>(data, i, aligned));
    case DType::u32: return load<std::uint32_t>(data, i, aligned);
    case DType::u16: return load<std::uint16_t>(data, i, aligned);
    case DType::u8: return load<std::uint8_t>(data, i, true);
    case DType::boolean: return load<std::uint8_t>(data, i, true) != 0 ? 1.0 : 0.0;
  }
  return NAN;
}

// Whether element i of two tensors of elements of `size` bytes holds the same bits: integers compare
// exactly so, whatever a double would round them to. `aligned`: both addresses are multiples of size.
KSCOPE_HOST_DEVICE inline bool same_bits(const void* a, const void* b, std::size_t i, std::size_t size,
                                         bool aligned = false) {
  switch (size) {
    case 8: return load<std::uint64_t>(a, i, aligned) == load<std::uint64_t>(b, i, aligned);
    case 4: return load<std::uint32_t>(a, i, aligned) == load<std::uint32_t>(b, i, aligned);
    case 2: return load<std::uint16_t>(a, i, aligned) == load<std::uint16_t>(b, i, aligned);
    default: return load<std::uint8_t>(a, i, true) == load<std::uint8_t>(b, i, true);
  }
}

// The largest finite magnitude of a floating dtype (its finfo.max, and -finfo.min); infinity for
// integers and bool, whose extremes are ordinary values compared exactly by default.
KSCOPE_HOST_DEVICE inline double largest_finite(DType dtype) {
  switch (dtype) {
    case DType::f64: return 1.7976931348623157e308;
    case DType::f32: return 3.4028234663852886e38;
    case DType::f16: return 65504.0;
    case DType::bf16: return 3.3895313892515355e38;
    case DType::f8_e4m3: return 448.0;
    case DType::f8_e5m2: return 57344.0;
    default: return INFINITY;
  }
}

// An infinity, or the dtype's largest finite magnitude (`largest`): the fill of masked elements
// (finfo.min, -inf) and the value of a saturated one, which a tolerance must never absorb.
KSCOPE_HOST_DEVICE inline bool is_extreme(double v, double largest) { return std::isinf(v) || std::fabs(v) == largest; }

// One element of TensorComparison's rule (kscope/tensor.hpp).
struct ElementVerdict {
  bool passes;
  double abs_error;
  double rel_error;
};

// a times b for a, b >= 0, rounded toward zero (never above the exact product).
KSCOPE_HOST_DEVICE inline double product_at_most(double a, double b) {
#ifdef __CUDA_ARCH__
  return __dmul_rd(a, b);
#else
  const double nearest = a * b;
  return nearest > 0 ? std::nextafter(nearest, 0.0) : nearest;
#endif
}

// `largest`: the dtype's largest finite magnitude (largest_finite), which, as an infinity, passes
// only against the same value. `seen`: a relative error the caller has already seen; an element whose
// relative error cannot exceed it reports 0, its division skipped (a running maximum is the same,
// and a GPU's double division is the dearest step of a comparison).
KSCOPE_HOST_DEVICE inline ElementVerdict judge(double c, double r, double atol, double rtol, double largest,
                                               double seen = 0) {
  const bool c_nan = c != c, r_nan = r != r;
  if (c_nan || r_nan) return {c_nan && r_nan, c_nan && r_nan ? 0.0 : INFINITY, c_nan && r_nan ? 0.0 : INFINITY};
  if (std::isinf(c) || std::isinf(r)) return {c == r, c == r ? 0.0 : INFINITY, c == r ? 0.0 : INFINITY};
  const double error = std::fabs(c - r);
  const double scale = rtol > 0 ? std::fmax(std::fabs(r), atol / rtol) : std::fabs(r);
  double relative = error == 0 ? 0.0 : INFINITY;
  if (error != 0 && scale > 0) relative = error > product_at_most(seen, scale) ? error / scale : 0.0;
  const bool exact = is_extreme(c, largest) || is_extreme(r, largest);
  return {exact ? c == r : error <= atol + rtol * std::fabs(r), error, relative};
}

// atol's scale, a tensor's typical magnitude: the median magnitude of its finite, nonzero elements
// other than the extremes, so that neither masked or saturated elements, nor zeros of padding, nor a
// few elements orders of magnitude larger than the rest move it. It is found from two histograms of
// the magnitudes as doubles, each counted in one pass (a GPU's atomics): by their exponent, then,
// within the exponent holding the median, by the next 8 bits; the median's bin gives the scale, the
// median with its mantissa cut to 8 bits (at most 0.4% below it).
constexpr unsigned kExponentBins = 2048;
constexpr unsigned kMantissaBins = 256;

KSCOPE_HOST_DEVICE inline bool counts_toward_scale(double v, double largest) {
  return v == v && v != 0 && !is_extreme(v, largest);
}

KSCOPE_HOST_DEVICE inline std::uint64_t magnitude_bits(double v) {
  const double magnitude = std::fabs(v);
  std::uint64_t bits;
  memcpy(&bits, &magnitude, sizeof bits);
  return bits;
}

KSCOPE_HOST_DEVICE inline unsigned exponent_bin(std::uint64_t bits) { return static_cast<unsigned>(bits >> 52); }
KSCOPE_HOST_DEVICE inline unsigned mantissa_bin(std::uint64_t bits) { return static_cast<unsigned>(bits >> 44) & 0xffu; }

// The median's rank among `counted` magnitudes, from 0 in increasing order (the lower median).
KSCOPE_HOST_DEVICE inline std::uint64_t median_rank(std::uint64_t counted) { return (counted - 1) / 2; }

// The bin of `counts` holding the magnitude of `rank`; `rank` becomes its rank within that bin.
KSCOPE_HOST_DEVICE inline unsigned bin_of_rank(const unsigned long long* counts, unsigned bins,
                                               unsigned long long& rank) {
  for (unsigned b = 0; b < bins; ++b) {
    if (rank < counts[b]) return b;
    rank -= counts[b];
  }
  return bins - 1;  // unreachable while rank is below the counts' total
}

// The lowest magnitude of an exponent's and mantissa bin's pair.
KSCOPE_HOST_DEVICE inline double bin_magnitude(unsigned exponent, unsigned mantissa) {
  const std::uint64_t bits = (std::uint64_t{exponent} << 52) | (std::uint64_t{mantissa} << 44);
  double v;
  memcpy(&v, &bits, sizeof v);
  return v;
}

// The checksum: the sum, modulo 2^64, of a mix of each 8-byte word with its position, so that it can
// be summed in any order (the GPU's threads) and still changes with any byte or any move of a word.
KSCOPE_HOST_DEVICE inline std::uint64_t mixed_word(std::uint64_t word, std::uint64_t position) {
  std::uint64_t z = word ^ (position * 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// Word `w` of a tensor of `bytes` bytes (the last one zero-padded). `aligned`: the data's address is a
// multiple of 8, so that a whole word is one load.
KSCOPE_HOST_DEVICE inline std::uint64_t word_at(const void* data, std::size_t bytes, std::size_t w,
                                                bool aligned = false) {
  const std::size_t offset = 8 * w;
  if (aligned && bytes - offset >= 8) return static_cast<const std::uint64_t*>(data)[w];
  std::uint64_t word = 0;
  memcpy(&word, static_cast<const unsigned char*>(data) + offset, bytes - offset < 8 ? bytes - offset : 8);
  return word;
}

}  // namespace kscope::detail

#pragma once
// A view of one tensor's memory, as kscope::evaluate reads it (kscope/evaluate.hpp): where its
// elements are, their type and shape. kscope compares and checksums what a view shows; it never
// owns, frees or writes the memory.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kscope {

// The element types kscope compares. Complex tensors are given as their floating-point parts.
enum class DType { f64, f32, f16, bf16, f8_e4m3, f8_e5m2, i64, i32, i16, i8, u64, u32, u16, u8, boolean };

// The name NumPy and PyTorch give the type: "float32", "bfloat16", "float8_e4m3fn", "int64", "bool"...
std::string to_string(DType dtype);
// The type of a name to_string gives; nullopt for any other text.
std::optional<DType> dtype_named(const std::string& name);
std::size_t size_of(DType dtype);  // bytes per element
bool is_floating(DType dtype);

// Where a view's memory is: the measured GPU's, or the host's.
enum class MemorySpace { device, host };

// A contiguous, row-major tensor.
struct TensorView {
  const void* data = nullptr;  // its first element
  std::vector<std::int64_t> shape;  // elements per dimension; empty for a scalar
  DType dtype = DType::f32;  // the element type
  MemorySpace memory = MemorySpace::device;  // where `data` points

  std::size_t elements() const;  // the product of the shape (1 for a scalar)
  std::size_t bytes() const { return elements() * size_of(dtype); }  // elements times the dtype's size
  // [2, 3] float32 on the device
  std::string describe() const;
};

// How far a candidate's element may be from the reference's: |c - r| <= atol + rtol * |r|.
struct Tolerance {
  double atol = 0;  // absolute tolerance
  double rtol = 0;  // relative tolerance
  // atol plus rtol times the reference's typical magnitude (evaluate()'s default atol, see
  // kscope/tensor_checks.hpp), found by the checks themselves, in the comparison's one wait.
  bool add_scaled_magnitude = false;
};

// A candidate tensor against a reference tensor of the same dtype and element count, element by
// element: an element passes when |c - r| <= atol + rtol * |r|, or when both are NaN; where either
// is an infinity or the floating dtype's largest finite magnitude (finfo.min, the usual fill of
// masked elements), only when both are the same value. Its error is |c - r| (infinite where exactly
// one is NaN or infinite, or the infinities differ); its relative error |c - r| / max(|r|, atol /
// rtol) (|c - r| / |r| with rtol 0, 0 where both are 0).
struct TensorComparison {
  std::size_t elements = 0;  // compared
  double atol = 0;  // the absolute tolerance applied (Tolerance::add_scaled_magnitude's included)
  std::size_t mismatched = 0;  // elements that do not pass
  double max_abs_error = 0;  // the largest |c - r|
  double max_rel_error = 0;  // the largest relative error
  // The first element that does not pass (its flat index and both values); meaningful when
  // mismatched > 0.
  std::size_t first_mismatch = 0;
  double first_candidate = 0;  // the candidate's value there
  double first_reference = 0;  // the reference's value there
};

}  // namespace kscope

#include "kscope/tensor.hpp"

#include <array>
#include <utility>

namespace kscope {
namespace {

struct DTypeFacts {
  DType dtype;
  const char* name;
  std::size_t bytes;
  bool floating;
};

constexpr std::array<DTypeFacts, 15> kDTypes{{
    {DType::f64, "float64", 8, true},
    {DType::f32, "float32", 4, true},
    {DType::f16, "float16", 2, true},
    {DType::bf16, "bfloat16", 2, true},
    {DType::f8_e4m3, "float8_e4m3fn", 1, true},
    {DType::f8_e5m2, "float8_e5m2", 1, true},
    {DType::i64, "int64", 8, false},
    {DType::i32, "int32", 4, false},
    {DType::i16, "int16", 2, false},
    {DType::i8, "int8", 1, false},
    {DType::u64, "uint64", 8, false},
    {DType::u32, "uint32", 4, false},
    {DType::u16, "uint16", 2, false},
    {DType::u8, "uint8", 1, false},
    {DType::boolean, "bool", 1, false},
}};

const DTypeFacts& facts(DType dtype) {
  for (const DTypeFacts& f : kDTypes)
    if (f.dtype == dtype) return f;
  return kDTypes.front();  // unreachable: every enumerator has a row
}

}  // namespace

std::string to_string(DType dtype) { return facts(dtype).name; }

std::optional<DType> dtype_named(const std::string& name) {
  for (const DTypeFacts& f : kDTypes)
    if (name == f.name) return f.dtype;
  return std::nullopt;
}

std::size_t size_of(DType dtype) { return facts(dtype).bytes; }

bool is_floating(DType dtype) { return facts(dtype).floating; }

std::size_t TensorView::elements() const {
  std::size_t n = 1;
  for (std::int64_t d : shape) n *= static_cast<std::size_t>(d < 0 ? 0 : d);
  return n;
}

std::string TensorView::describe() const {
  std::string dims;
  for (std::int64_t d : shape) dims += (dims.empty() ? "" : ", ") + std::to_string(d);
  return "[" + dims + "] " + to_string(dtype) + (memory == MemorySpace::device ? " on the device" : " on the host");
}

}  // namespace kscope

#include "core/decisions/checks_by_memory.hpp"

#include <utility>

#include "core/decisions/host_tensor_checks.hpp"

namespace kscope::detail {

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

std::vector<std::uint64_t> ChecksByMemory::checksums(const std::vector<TensorView>& tensors) {
  return each<std::uint64_t>(tensors, host_checksum,
                             [&](const std::vector<TensorView>& v) { return device_.checksums(v); });
}

void ChecksByMemory::start_checksums(const std::vector<TensorView>& tensors) {
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

std::vector<std::uint64_t> ChecksByMemory::finish_checksums() {
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

std::vector<TensorComparison> ChecksByMemory::compare(const std::vector<TensorView>& candidates,
                                                    const std::vector<TensorView>& references,
                                                    const std::vector<Tolerance>& tolerances) {
  std::vector<TensorComparison> out(candidates.size());
  std::vector<TensorView> gpu_candidates, gpu_references;
  std::vector<Tolerance> gpu_tolerances;
  std::vector<std::size_t> where;
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    if (references[i].memory == MemorySpace::host) {
      out[i] = host_compare(candidates[i], references[i], tolerances[i]);
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

#include "device/persisting_l2.hpp"

#include <cstdio>
#include <optional>

#include "device/cuda_check.hpp"

namespace kscope::device {
namespace {

std::string window_text(const cudaAccessPolicyWindow& w) {
  char text[160];
  std::snprintf(text, sizeof text, "an access-policy window on the caller's stream over %zu bytes from %p, hit ratio %g",
                w.num_bytes, w.base_ptr, static_cast<double>(w.hitRatio));
  return text;
}

// The set-aside, or nothing on a GPU none of whose L2 lines can be set aside.
std::optional<std::size_t> limit_if_supported() {
  int device = 0, persisting_max = 0;
  check_cuda(cudaGetDevice(&device), "cudaGetDevice");
  check_cuda(cudaDeviceGetAttribute(&persisting_max, cudaDevAttrMaxPersistingL2CacheSize, device),
             "cudaDeviceGetAttribute(cudaDevAttrMaxPersistingL2CacheSize)");
  if (persisting_max == 0) return std::nullopt;
  std::size_t limit = 0;
  check_cuda(cudaDeviceGetLimit(&limit, cudaLimitPersistingL2CacheSize),
             "cudaDeviceGetLimit(cudaLimitPersistingL2CacheSize)");
  return limit;
}

}  // namespace

std::size_t persisting_l2_limit() { return limit_if_supported().value_or(0); }

std::string take_persisting_l2(cudaStream_t stream, std::size_t limit_before) {
  const std::optional<std::size_t> found_limit = limit_if_supported();
  if (!found_limit) return "";
  const std::size_t limit = *found_limit;
  const bool limit_changed = limit != limit_before;
  cudaStreamAttrValue attribute{};
  if (cudaStreamGetAttribute(stream, cudaStreamAttributeAccessPolicyWindow, &attribute) != cudaSuccess) {
    // Where the stream's attribute cannot be read, no window can have been set on it either.
    (void)cudaGetLastError();
    attribute = {};
  }
  const cudaAccessPolicyWindow window = attribute.accessPolicyWindow;
  if (!limit_changed && window.num_bytes == 0) return "";

  std::string found;
  if (limit_changed) {
    found = "a persisting-L2 set-aside of " + std::to_string(limit) + " bytes (cudaLimitPersistingL2CacheSize, " +
            std::to_string(limit_before) + " before the measured calls)";
    check_cuda(cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, limit_before),
               "cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize) back to its value before the measured calls");
  }
  if (window.num_bytes > 0) {
    found += (found.empty() ? "" : " and ") + window_text(window);
    cudaStreamAttrValue none = attribute;
    none.accessPolicyWindow.num_bytes = 0;  // CUDA's way to remove a window
    check_cuda(cudaStreamSetAttribute(stream, cudaStreamAttributeAccessPolicyWindow, &none),
               "cudaStreamSetAttribute(cudaStreamAttributeAccessPolicyWindow, none)");
  }
  check_cuda(cudaCtxResetPersistingL2Cache(), "cudaCtxResetPersistingL2Cache");
  const bool both = limit_changed && window.num_bytes > 0;
  return found + (both ? " were set; kscope reset them" : " was set; kscope reset it");
}

}  // namespace kscope::device

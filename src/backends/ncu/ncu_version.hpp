#pragma once
// Nsight Compute versions, as `ncu --version` prints them:
//   NVIDIA (R) Nsight Compute Command Line Profiler
//   Copyright (c) 2018-2025 NVIDIA Corporation
//   Version 2025.3.1.0 (build 36398880) (public-release)
#include <compare>
#include <optional>
#include <string>

namespace kscope::ncu {

struct NcuVersion {
  int year = 0;
  int minor = 0;
  int patch = 0;
  int build = 0;
  auto operator<=>(const NcuVersion&) const = default;
  std::string to_string() const;  // "2025.3.1.0"
};

// The oldest ncu kscope supports: the one it is tested with (the GPU machine's, CUDA 13.0). Older
// releases differ in options and CSV export, and kscope has no way to check them.
inline constexpr NcuVersion kMinimumNcuVersion{2025, 3, 1, 0};

// The version in `ncu --version` output (the "Version a.b.c[.d]" line); nullopt when absent.
std::optional<NcuVersion> parse_ncu_version(const std::string& version_output);

// A directory name such as "2025.3.1" under /opt/nvidia/nsight-compute; nullopt for other names.
std::optional<NcuVersion> parse_version_number(const std::string& text);

}  // namespace kscope::ncu

#pragma once
// The saxpy example's sweep and settings, shared by the GPU program (saxpy.cu) and the one on the
// simulated backend (saxpy_simulated.cpp): y = a*x + y over size and precision, 20 runs per config,
// the bandwidth derived from each run's kernel duration.
#include <cstdint>
#include <string>
#include <vector>

#include "kscope/kscope.hpp"

namespace saxpy_example {

inline std::size_t element_bytes(const std::string& dtype) { return dtype == "f16" ? 2 : 4; }

// Bytes one saxpy moves: x and y read, y written.
inline double bytes_moved(const kscope::Config& c) {
  return 3.0 * static_cast<double>(c.get<std::int64_t>("n")) *
         static_cast<double>(element_bytes(c.get<std::string>("dtype")));
}

inline kscope::Sweep sweep() {
  kscope::Sweep sweep;
  sweep.axis("n", {1 << 16, 1 << 20, 1 << 24}).axis("dtype", {"f32", "f16"});
  return sweep;
}

inline kscope::Settings settings() {
  kscope::Settings settings;
  settings.runs = 20;
  // Bytes over the kernel's duration (the one measured value): bytes per ns = GB/s.
  settings.derive_metric = [](const kscope::MeasuredValues& measured, const kscope::Config& c) {
    return std::vector<kscope::DerivedValue>{{"bandwidth", bytes_moved(c) / measured.front(), "GB/s"}};
  };
  return settings;
}

}  // namespace saxpy_example

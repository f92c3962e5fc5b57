#pragma once
// The resident memory of this process, from /proc/self (Linux): for the tests and the scale
// benchmark (bench/scale.cpp) that check how much kscope holds.
#include <fstream>
#include <string>

namespace kscope_test {

// A /proc/self/status field in bytes ("VmRSS": resident now, "VmHWM": its peak); 0 when absent.
inline double status_bytes(const char* field) {
  std::ifstream in("/proc/self/status");
  const std::string key = std::string(field) + ":";
  for (std::string line; std::getline(in, line);)
    if (line.rfind(key, 0) == 0) return std::stod(line.substr(key.size())) * 1024.0;
  return 0;
}

// Sets the peak (VmHWM) back to the current resident memory (Linux >= 4.0).
inline void reset_peak_rss() {
  std::ofstream clear("/proc/self/clear_refs");
  clear << "5";
}

}  // namespace kscope_test

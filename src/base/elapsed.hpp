#pragma once
// Wall time summed into a total: for the debug log's account of where kscope's own time goes.
#include <chrono>
#include <cstdio>
#include <string>

namespace kscope::detail {

// Adds the time from its making to its end to `total` (seconds), also when an exception ends it.
class TimeInto {
 public:
  explicit TimeInto(double& total) : total_(total), started_(std::chrono::steady_clock::now()) {}
  ~TimeInto() { total_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count(); }
  TimeInto(const TimeInto&) = delete;
  TimeInto& operator=(const TimeInto&) = delete;

 private:
  double& total_;
  std::chrono::steady_clock::time_point started_;
};

// "12.345 ms", for seconds summed by TimeInto.
inline std::string as_milliseconds(double seconds) {
  char text[48];
  std::snprintf(text, sizeof text, "%.3f ms", 1e3 * seconds);
  return text;
}

}  // namespace kscope::detail

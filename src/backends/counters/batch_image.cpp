#include "backends/counters/batch_image.hpp"

#include <algorithm>

namespace kscope::counters {

BatchImage::BatchImage(std::size_t fixed_bytes, std::size_t bytes_per_range)
    : max_ranges_(std::clamp<std::size_t>(
          kMaxImageBytes > fixed_bytes ? (kMaxImageBytes - fixed_bytes) / std::max<std::size_t>(bytes_per_range, 1) : 0,
          1, kMaxRanges)) {}

std::size_t BatchImage::max_runs() const { return std::max<std::size_t>(1, max_ranges_ / per_run_); }

std::size_t BatchImage::ranges_for(std::size_t runs) const {
  // One run's ranges always fit, even past the memory bound.
  const std::size_t limit = std::max(max_ranges_, std::min(per_run_, kMaxRanges));
  return std::clamp<std::size_t>(runs * per_run_, 1, limit);
}

bool BatchImage::has_room(std::size_t used, std::size_t largest) const { return used + largest <= max_ranges_; }

std::size_t BatchImage::grown(std::size_t ranges, std::size_t current) const {
  if (ranges <= current || current >= kMaxRanges) return 0;
  return std::min(ranges, kMaxRanges);
}

void BatchImage::expect(std::size_t ranges_per_run) { per_run_ = std::max<std::size_t>(ranges_per_run, 1); }

}  // namespace kscope::counters

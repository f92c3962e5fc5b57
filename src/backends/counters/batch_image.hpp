#pragma once
// How many ranges one batch's counter data image holds, and so how many runs a batch takes. Pure
// logic, tested without a GPU.
//
// Every pass of a batch spans all its runs, so the image holds ranges per run x runs. CUPTI's
// image is host memory, linear in the ranges (fixed + per-range bytes: 660,012 per range for 5
// metrics in 8 passes on the H200, 10.6 MB for 16 ranges, 338 MB for 512), and rewritten before
// every batch at about 0.3 ms per MB (92-135 ms for 338 MB). The bound, kMaxImageBytes = 256 MiB,
// holds ~400 ranges of that set: ~135 runs of one kernel even when the L2 flush's memset and
// discard kernel were ranges too (three per run), where CUPTI's start and stop (8 + 2.5 ms a pass)
// cost 0.6 ms per run, already less than rewriting the run's share of the image; a larger image
// only costs memory. One run always fits, up to kMaxRanges (as before batches: a run with more
// kernels fails).
#include <cstddef>

namespace kscope::counters {

class BatchImage {
 public:
  static constexpr std::size_t kMaxRanges = 512;                       // per replay pass
  static constexpr std::size_t kMaxImageBytes = std::size_t(256) << 20;
  static constexpr std::size_t kFirstRangesPerRun = 2;                 // a kernel and its flush

  // CUPTI's image size for this metric config: fixed_bytes + ranges * bytes_per_range.
  BatchImage(std::size_t fixed_bytes, std::size_t bytes_per_range);

  // The most ranges a pass holds: kMaxRanges, or fewer when their image exceeds kMaxImageBytes.
  std::size_t max_ranges() const { return max_ranges_; }
  // The runs a batch may plan for, at the ranges per run expected.
  std::size_t max_runs() const;
  // The image a batch of `runs` starts with (a first pass with more ranges grows it: grown()).
  std::size_t ranges_for(std::size_t runs) const;
  // In a first pass: whether another run fits, after runs that made `used` ranges in all and at
  // most `largest` each.
  bool has_room(std::size_t used, std::size_t largest) const;
  // The image a first pass of `ranges` ranges needs, when more than `current`; 0 when it fits, or
  // when no larger image can help (the pass already holds kMaxRanges: CUPTI drops the rest).
  std::size_t grown(std::size_t ranges, std::size_t current) const;
  // The ranges per run a batch's first pass found: the next batches are planned with it.
  void expect(std::size_t ranges_per_run);
  std::size_t expected_ranges_per_run() const { return per_run_; }

 private:
  std::size_t max_ranges_;
  std::size_t per_run_ = kFirstRangesPerRun;
};

}  // namespace kscope::counters

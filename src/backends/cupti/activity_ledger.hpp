#pragma once
// The cupti backend's bookkeeping, apart from CUPTI itself: the calls made in regions (kernel
// launches, copies and fills, kscope's stream markers), the activity records CUPTI delivered for
// them, matched by correlation id, and the runs' measurements they make.
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/model/kernel_names.hpp"
#include "kscope/measurement_backend.hpp"

namespace kscope::cupti {

// How many activity records a call yields.
enum class Records {
  one,  // a kernel launch, a copy between named memories or a fill, of nonzero size
  any,  // a graph launch, a copy batch, a copy or fill whose work is not known from its call
};

// A call made in a region.
struct Call {
  std::size_t run = 0;  // among the runs ended since the last collection
  std::int64_t region = 0;
  Records records = Records::one;
  bool after_return = false;  // made after the region's measured call returned (CallObserver)
  bool marker = false;        // kscope's stream marker: its record times the call's end, it is no activity
  bool recorded = false;
  bool unjoined = false;  // the caller's stream was not ordered after it when the call returned (CallOrder)
};

// A kernel, copy or fill that a call made in a region caused.
struct Activity {
  std::size_t run = 0;
  std::int64_t region = 0;
  GpuInterval gpu_time;
  std::uint32_t correlation = 0;
  std::string name;  // a kernel's mangled name, or a copy's or fill's ("[memcpy HtoD]", "[memset]")
  bool after_return = false;
  bool unjoined = false;  // as its call
};

using RunRegion = std::pair<std::size_t, std::int64_t>;

// What the runs since the last collection produced.
struct RunTrace {
  std::vector<Activity> activities;
  // Per (run, region) whose measured call returned: its stream marker's record, which started when
  // the caller's stream reached the end of the call.
  std::map<RunRegion, GpuInterval> returned_at;
  std::size_t unrecorded = 0;       // calls that yield one record and have none
  std::size_t dropped_records = 0;  // CUPTI's count, for lack of buffer space
  std::string fatal_error;          // CUPTI's fatal-error notification, if any (it then detached)
};

// Not thread-safe: the tracer serialises its callers.
class ActivityLedger {
 public:
  void called(std::uint32_t correlation, const Call& call) { calls_.insert_or_assign(correlation, call); }
  // The call failed: it runs nothing.
  void failed(std::uint32_t correlation) { calls_.erase(correlation); }
  // The caller's stream was not ordered after these calls when their call returned.
  void unjoined(const std::vector<std::uint64_t>& correlations);
  // A record of correlation id `correlation`; one of a call made outside the regions is dropped.
  void recorded(std::uint32_t correlation, GpuInterval gpu_time, std::string name);
  void dropped(std::size_t records) { trace_.dropped_records += records; }
  // Every call has the records it yields: false while a call yielding any number of them exists,
  // since a forced flush may still bring more.
  bool complete() const;
  // Forgets what `run` made (its body failed).
  void drop_run(std::size_t run);
  // What the calls made so far produced; the ledger starts empty again.
  RunTrace take();

 private:
  std::unordered_map<std::uint32_t, Call> calls_;
  RunTrace trace_;
};

// Why the cupti backend cannot measure any more once CUPTI reported `detail`, a fatal error.
std::string fatal_error_message(const std::string& detail);

// Per run of `region_counts` (the regions each ended run opened), per region, its activities in
// start order, each flagged launched_after_return and unjoined (still running once the caller's
// stream reached the call's end, the start of the region's marker). Throws BackendError when the
// trace cannot be trusted: CUPTI detached, dropped records, a call without its record, or records
// without timestamps.
std::vector<RunMeasurement> measurements_of(RunTrace trace, const std::vector<std::size_t>& region_counts,
                                            KernelNames& names);

}  // namespace kscope::cupti

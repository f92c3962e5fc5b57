#include "backends/cupti/activity_ledger.hpp"

#include <algorithm>

#include "core/model/backend_choice.hpp"
#include "kscope/errors.hpp"

namespace kscope::cupti {

void ActivityLedger::recorded(std::uint32_t correlation, GpuInterval gpu_time, std::string name) {
  const auto found = calls_.find(correlation);
  if (found == calls_.end()) return;  // made outside any region
  Call& call = found->second;
  call.recorded = true;
  if (call.marker) {
    trace_.returned_at[{call.run, call.region}] = gpu_time;
    return;
  }
  trace_.activities.push_back(
      {call.run, call.region, gpu_time, correlation, std::move(name), call.after_return, call.unjoined});
}

void ActivityLedger::unjoined(const std::vector<std::uint64_t>& correlations) {
  for (std::uint64_t c : correlations)
    if (const auto found = calls_.find(static_cast<std::uint32_t>(c)); found != calls_.end()) found->second.unjoined = true;
  // A record CUPTI delivered already (a buffer that filled up during the call).
  for (Activity& a : trace_.activities)
    if (std::find(correlations.begin(), correlations.end(), a.correlation) != correlations.end()) a.unjoined = true;
}

bool ActivityLedger::complete() const {
  return std::all_of(calls_.begin(), calls_.end(), [](const auto& entry) {
    return entry.second.records == Records::one && entry.second.recorded;
  });
}

void ActivityLedger::drop_run(std::size_t run) {
  std::erase_if(calls_, [&](const auto& entry) { return entry.second.run == run; });
  std::erase_if(trace_.activities, [&](const Activity& a) { return a.run == run; });
  std::erase_if(trace_.returned_at, [&](const auto& entry) { return entry.first.first == run; });
}

RunTrace ActivityLedger::take() {
  RunTrace taken = std::exchange(trace_, RunTrace{});
  taken.unrecorded = static_cast<std::size_t>(std::count_if(calls_.begin(), calls_.end(), [](const auto& entry) {
    return entry.second.records == Records::one && !entry.second.recorded;
  }));
  calls_.clear();
  return taken;
}

std::string fatal_error_message(const std::string& detail) {
  return "CUPTI reported a fatal error and detached from this process (" + detail +
         "): the cupti backend cannot measure here any more; use " + detail::backend_choice(Backend::events) +
         " or restart the process";
}

namespace {

void check_timestamps(const GpuInterval& t, const std::string& name) {
  if (t.start_ns != 0 || t.end_ns != 0) return;
  throw BackendError("CUPTI returned no timestamps (start = end = 0) for '" + name +
                     "': a counter profiler (CUPTI range profiler, ncu) is active in this process, or CUPTI ran "
                     "out of device timestamp buffers. Profile with counters and with timing in separate runs");
}

}  // namespace

std::vector<RunMeasurement> measurements_of(RunTrace trace, const std::vector<std::size_t>& region_counts,
                                            KernelNames& names) {
  if (!trace.fatal_error.empty()) throw BackendError(fatal_error_message(trace.fatal_error));
  if (trace.dropped_records > 0) {
    throw BackendError("CUPTI dropped " + std::to_string(trace.dropped_records) +
                       " activity records for lack of buffer space, so some kernels would be "
                       "missing: launch fewer kernels per run");
  }
  if (trace.unrecorded > 0) {
    throw BackendError("CUPTI delivered no activity record for " + std::to_string(trace.unrecorded) +
                       " kernel launch(es), copies or fills made inside regions; the durations would be "
                       "incomplete. Is another tool tracing this process?");
  }
  for (const auto& [where, marker] : trace.returned_at) check_timestamps(marker, "kscope's stream marker");

  std::sort(trace.activities.begin(), trace.activities.end(), [](const Activity& a, const Activity& b) {
    return a.gpu_time.start_ns != b.gpu_time.start_ns ? a.gpu_time.start_ns < b.gpu_time.start_ns
                                                      : a.correlation < b.correlation;
  });
  std::vector<RunMeasurement> runs;
  for (std::size_t count : region_counts) runs.emplace_back(count);
  for (const Activity& activity : trace.activities) {
    const std::string& name = names.of(activity.name);
    check_timestamps(activity.gpu_time, name);
    if (activity.run >= runs.size() || activity.region < 0 ||
        activity.region >= static_cast<std::int64_t>(runs[activity.run].size())) {
      throw InternalError("'" + name + "' was launched in region " + std::to_string(activity.region) + " of run " +
                          std::to_string(activity.run) +
                          ", which the session did not end (kscope bug: please report it with this message)");
    }
    KernelMeasurement k{name,
                        {static_cast<double>(activity.gpu_time.end_ns) - static_cast<double>(activity.gpu_time.start_ns)},
                        activity.gpu_time};
    k.launched_after_return = activity.after_return;
    const auto returned = trace.returned_at.find({activity.run, activity.region});
    // Still running when the marker started, or (the marker late behind a slow host) never waited for.
    k.unjoined = activity.unjoined ||
                 (returned != trace.returned_at.end() && activity.gpu_time.end_ns > returned->second.start_ns);
    runs[activity.run][static_cast<std::size_t>(activity.region)].push_back(std::move(k));
  }
  return runs;
}

}  // namespace kscope::cupti

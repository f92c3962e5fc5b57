#include "backends/counters/range_attribution.hpp"

#include <algorithm>
#include <charconv>
#include <iterator>
#include <optional>
#include <string_view>

#include "core/model/caller_language.hpp"
#include "kscope/errors.hpp"

namespace kscope::counters {
namespace {

[[noreturn]] void unexpected_name(const std::string& name, const std::string& expected) {
  throw InternalError("the range profiler returned a range named '" + name + "' where kscope expected " + expected +
                      " (kscope bug: please report it with this message)");
}

// The number `text` is made of; nullopt for anything else.
std::optional<std::size_t> number_in(std::string_view text) {
  std::size_t number = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), number);
  if (text.empty() || error != std::errc{} || end != text.data() + text.size()) return std::nullopt;
  return number;
}

// An auto range's number; throws for any other name.
std::size_t range_number(const std::string& name) {
  const auto number = number_in(name);
  if (!number) unexpected_name(name, "a number");
  return *number;
}

std::string region_label(std::ptrdiff_t region) {
  return region < 0 ? "outside every region" : "in region " + std::to_string(region);
}

// A flush is a memset and a discard kernel, and a persisting-L2 reset before them at most.
constexpr std::size_t kMaxFlushRanges = 3;

std::string replay_range_fix() {
  return detail::spell("Settings::replay_mode = ReplayMode::range", "replay_mode='range'");
}

// Where a launch's values go: its run's region, or nowhere (outside every region). Throws
// InternalError for a run or region the batch does not have.
std::vector<KernelMeasurement>* slot_of(std::vector<RunMeasurement>& out, const Launch& l, std::size_t index) {
  if (l.run >= out.size()) {
    throw InternalError("kernel launch " + std::to_string(index) + " belongs to run " + std::to_string(l.run) +
                        " of a batch of " + std::to_string(out.size()) +
                        " runs (kscope bug: please report it with this message)");
  }
  if (l.region < 0) return nullptr;
  RunMeasurement& run = out[l.run];
  if (static_cast<std::size_t>(l.region) >= run.size()) {
    throw InternalError("kernel launch " + std::to_string(index) + " " + region_label(l.region) + " but its run had " +
                        std::to_string(run.size()) + " regions (kscope bug: please report it with this message)");
  }
  return &run[static_cast<std::size_t>(l.region)];
}

std::vector<RunMeasurement> empty_runs(const std::vector<std::size_t>& region_counts) {
  std::vector<RunMeasurement> out;
  for (std::size_t regions : region_counts) out.emplace_back(regions);
  return out;
}

}  // namespace

std::string user_range_name(std::size_t run, std::size_t region) {
  return std::to_string(run) + ":" + std::to_string(region);
}

void refuse_graph_launches(const std::vector<Launch>& launches) {
  for (const auto& l : launches) {
    if (l.graph && l.region >= 0) {
      throw BackendError("kernel replay cannot replay a CUDA graph launch (region " + std::to_string(l.region) +
                         " launched one): the range profiler cannot measure the kernels of a graph one by one "
                         "(CUPTI limitation). Use " + replay_range_fix() +
                         ", which measures the whole region, or launch the kernels without a graph");
    }
  }
}

std::vector<RunMeasurement> attribute_kernel_ranges(const std::vector<Launch>& launches,
                                                    const std::vector<RangeResult>& ranges,
                                                    const std::vector<std::size_t>& region_counts,
                                                    const MetricLayout& layout) {
  refuse_graph_launches(launches);
  // Every flush made the same number of ranges (it is the same work each time): 0 to kMaxFlushRanges.
  const auto flushes = static_cast<std::size_t>(std::count_if(launches.begin(), launches.end(), [](const Launch& l) {
    return l.flush;
  }));
  const std::size_t kernels = launches.size() - flushes;
  std::optional<std::size_t> per_flush;
  for (std::size_t k = 0; k <= kMaxFlushRanges && !per_flush; ++k)
    if (ranges.size() == kernels + k * flushes) per_flush = k;
  if (!per_flush) {
    throw BackendError("the range profiler measured " + std::to_string(ranges.size()) + " kernels but " +
                       std::to_string(kernels) +
                       " kernel launches were seen between its start and stop; per-kernel values cannot be matched "
                       "to kernels. Kernels launched by CUDA libraries through other entry points, or in other "
                       "contexts, cause this: use " + replay_range_fix() + " for such regions");
  }
  // Auto ranges are numbered in launch order; CUPTI 13.0 counts from 1 on the H200 (its header
  // example from 0), so the order of the numbers is what matters, not where they start.
  std::vector<std::pair<std::size_t, const RangeResult*>> by_number;
  for (const auto& r : ranges) by_number.emplace_back(range_number(r.name), &r);
  std::sort(by_number.begin(), by_number.end());
  for (std::size_t i = 1; i < by_number.size(); ++i)
    if (by_number[i].first == by_number[i - 1].first) unexpected_name(by_number[i].second->name, "unique numbers");
  std::vector<RunMeasurement> out = empty_runs(region_counts);
  std::size_t range = 0;
  for (std::size_t i = 0; i < launches.size(); ++i) {
    const Launch& l = launches[i];
    if (l.flush) {
      range += *per_flush;
      continue;
    }
    if (auto* slot = slot_of(out, l, i)) slot->push_back({l.kernel, layout.values(by_number[range].second->values, l.shape)});
    ++range;
  }
  return out;
}

std::vector<RunMeasurement> attribute_user_ranges(const std::vector<Launch>& launches,
                                                  const std::vector<RangeResult>& ranges,
                                                  const std::vector<std::size_t>& region_counts) {
  // The kernels of each (run, region), '|'-joined in launch order.
  std::vector<std::vector<std::string>> kernels;
  for (std::size_t regions : region_counts) kernels.emplace_back(regions);
  for (const auto& l : launches) {
    if (l.run >= kernels.size() || l.region < 0 || static_cast<std::size_t>(l.region) >= kernels[l.run].size())
      continue;
    std::string& names = kernels[l.run][static_cast<std::size_t>(l.region)];
    names += (names.empty() ? "" : "|") + l.kernel;
  }
  std::vector<RunMeasurement> out = empty_runs(region_counts);
  for (const auto& r : ranges) {
    const std::string_view name = r.name;
    const auto colon = name.find(':');
    const auto run = colon == name.npos ? std::nullopt : number_in(name.substr(0, colon));
    const auto region = colon == name.npos ? std::nullopt : number_in(name.substr(colon + 1));
    if (!run || !region || *run >= out.size() || *region >= out[*run].size())
      unexpected_name(r.name, "'run:region' of a run and region of this batch");
    // A region that launched nothing yields nothing, and the engine reports it as such.
    const std::string& names = kernels[*run][*region];
    if (!names.empty()) out[*run][*region].push_back({names, r.values});
  }
  return out;
}

std::vector<Launch> launches_of(const std::vector<Launch>& launches, std::size_t run) {
  std::vector<Launch> out;
  std::copy_if(launches.begin(), launches.end(), std::back_inserter(out),
               [&](const Launch& l) { return l.run == run; });
  return out;
}

void check_same_launches(const std::vector<Launch>& first, const std::vector<Launch>& later, std::size_t pass) {
  const auto describe = [](const std::vector<Launch>& ls, std::size_t i) {
    return i < ls.size() ? "'" + ls[i].kernel + "' " + region_label(ls[i].region) : std::string("nothing");
  };
  for (std::size_t i = 0; i < std::max(first.size(), later.size()); ++i) {
    const bool same = i < first.size() && i < later.size() && first[i].kernel == later[i].kernel &&
                      first[i].region == later[i].region && first[i].flush == later[i].flush;
    if (same) continue;
    throw KernelCountError(
        "replay pass " + std::to_string(pass) + " launched other kernels than the run's first pass (launch " +
        std::to_string(i + 1) + ": the first pass launched " + describe(first, i) + ", pass " + std::to_string(pass) +
        " " + describe(later, i) +
        "). The metrics need several passes, and the counter backend calls the body once per pass: it must "
        "launch the same kernels in the same order every time (no data-dependent launches, no caching of "
        "results between calls)");
  }
}

}  // namespace kscope::counters

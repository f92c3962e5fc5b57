#include "backends/counters/range_attribution.hpp"

#include <algorithm>
#include <charconv>

#include "kscope/errors.hpp"

namespace kscope::counters {
namespace {

// CUPTI's name of range `name` as an index below `limit`; throws for anything else.
std::size_t range_index(const std::string& name, std::size_t limit) {
  std::size_t index = 0;
  const auto [end, error] = std::from_chars(name.data(), name.data() + name.size(), index);
  if (error != std::errc{} || end != name.data() + name.size() || index >= limit) {
    throw BackendError("the range profiler returned a range named '" + name +
                       "' where kscope expected an index below " + std::to_string(limit) +
                       " (kscope bug: please report it with this message)");
  }
  return index;
}

std::string region_label(std::ptrdiff_t region) {
  return region < 0 ? "outside every region" : "in region " + std::to_string(region);
}

}  // namespace

std::vector<std::vector<KernelMeasurement>> attribute_kernel_ranges(const std::vector<Launch>& launches,
                                                                    const std::vector<RangeResult>& ranges,
                                                                    std::size_t region_count) {
  for (const auto& l : launches) {
    if (l.graph && l.region >= 0) {
      throw BackendError("region " + std::to_string(l.region) +
                         " launched a CUDA graph: the range profiler cannot replay the kernels of a graph one by one "
                         "(CUPTI limitation). Use Settings::replay_mode = ReplayMode::range, which measures the "
                         "whole region, or launch the kernels without a graph");
    }
  }
  std::vector<Launch> measured;  // what the ranges stand for, in order
  for (const auto& l : launches)
    if (!l.flush) measured.push_back(l);
  if (ranges.size() != measured.size()) measured = launches;  // then the flushes have ranges too
  if (ranges.size() != measured.size()) {
    throw BackendError("the range profiler measured " + std::to_string(ranges.size()) + " kernels but " +
                       std::to_string(measured.size()) +
                       " kernel launches were seen between its start and stop; per-kernel values cannot be matched "
                       "to kernels. Kernels launched by CUDA libraries through other entry points, or in other "
                       "contexts, cause this: use Settings::replay_mode = ReplayMode::range for such regions");
  }
  std::vector<std::vector<KernelMeasurement>> out(region_count);
  std::vector<const RangeResult*> by_launch(measured.size(), nullptr);
  for (const auto& r : ranges) by_launch[range_index(r.name, measured.size())] = &r;
  for (std::size_t i = 0; i < measured.size(); ++i) {
    const Launch& l = measured[i];
    if (l.region < 0) continue;
    if (static_cast<std::size_t>(l.region) >= region_count || by_launch[i] == nullptr) {
      throw BackendError("kernel launch " + std::to_string(i) + " " + region_label(l.region) +
                         " has no matching range among " + std::to_string(region_count) +
                         " regions (kscope bug: please report it with this message)");
    }
    out[static_cast<std::size_t>(l.region)].push_back({l.kernel, by_launch[i]->values});
  }
  return out;
}

std::vector<std::vector<KernelMeasurement>> attribute_user_ranges(const std::vector<Launch>& launches,
                                                                  const std::vector<RangeResult>& ranges,
                                                                  std::size_t region_count) {
  std::vector<std::string> kernels(region_count);
  for (const auto& l : launches) {
    if (l.region < 0 || static_cast<std::size_t>(l.region) >= region_count) continue;
    std::string& names = kernels[static_cast<std::size_t>(l.region)];
    names += (names.empty() ? "" : "|") + l.kernel;
  }
  std::vector<std::vector<KernelMeasurement>> out(region_count);
  for (const auto& r : ranges) {
    const std::size_t region = range_index(r.name, region_count);
    // A region that launched nothing yields nothing, and the engine reports it as such.
    if (!kernels[region].empty()) out[region].push_back({kernels[region], r.values});
  }
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
    throw AnnotationError(
        "replay pass " + std::to_string(pass) + " launched other kernels than pass 1 (launch " + std::to_string(i + 1) +
        ": pass 1 launched " + describe(first, i) + ", pass " + std::to_string(pass) + " " + describe(later, i) +
        "). The metrics need several passes, and the counter backend calls the body once per pass: it must "
        "launch the same kernels in the same order every time (no data-dependent launches, no caching of "
        "results between calls)");
  }
}

}  // namespace kscope::counters

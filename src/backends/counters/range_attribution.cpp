#include "backends/counters/range_attribution.hpp"

#include <algorithm>
#include <charconv>

#include "kscope/errors.hpp"

namespace kscope::counters {
namespace {

[[noreturn]] void unexpected_name(const std::string& name, const std::string& expected) {
  throw InternalError("the range profiler returned a range named '" + name + "' where kscope expected " + expected +
                      " (kscope bug: please report it with this message)");
}

// The number a range is named by; throws for any other name.
std::size_t range_number(const std::string& name) {
  std::size_t number = 0;
  const auto [end, error] = std::from_chars(name.data(), name.data() + name.size(), number);
  if (error != std::errc{} || end != name.data() + name.size()) unexpected_name(name, "a number");
  return number;
}

// A user range's region: kscope names them by region index.
std::size_t region_of(const std::string& name, std::size_t region_count) {
  const std::size_t region = range_number(name);
  if (region >= region_count) unexpected_name(name, "a region index below " + std::to_string(region_count));
  return region;
}

std::string region_label(std::ptrdiff_t region) {
  return region < 0 ? "outside every region" : "in region " + std::to_string(region);
}

}  // namespace

std::vector<std::vector<KernelMeasurement>> attribute_kernel_ranges(const std::vector<Launch>& launches,
                                                                    const std::vector<RangeResult>& ranges,
                                                                    std::size_t region_count,
                                                                    const MetricLayout& layout) {
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
  // Auto ranges are numbered in launch order; CUPTI 13.0 counts from 1 on the H200 (its header
  // example from 0), so the order of the numbers is what matters, not where they start.
  std::vector<std::pair<std::size_t, const RangeResult*>> by_number;
  for (const auto& r : ranges) by_number.emplace_back(range_number(r.name), &r);
  std::sort(by_number.begin(), by_number.end());
  for (std::size_t i = 1; i < by_number.size(); ++i)
    if (by_number[i].first == by_number[i - 1].first) unexpected_name(by_number[i].second->name, "unique numbers");
  std::vector<std::vector<KernelMeasurement>> out(region_count);
  for (std::size_t i = 0; i < measured.size(); ++i) {
    const Launch& l = measured[i];
    if (l.region < 0) continue;
    if (static_cast<std::size_t>(l.region) >= region_count) {
      throw InternalError("kernel launch " + std::to_string(i) + " " + region_label(l.region) + " but the run had " +
                         std::to_string(region_count) + " regions (kscope bug: please report it with this message)");
    }
    out[static_cast<std::size_t>(l.region)].push_back({l.kernel, layout.values(by_number[i].second->values, l.shape)});
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
    const std::size_t region = region_of(r.name, region_count);
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

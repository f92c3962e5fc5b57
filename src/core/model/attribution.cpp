#include "core/model/attribution.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>

#include "base/text.hpp"
#include "core/model/caller_language.hpp"
#include "core/model/exception_message.hpp"
#include "core/model/suggest.hpp"
#include "kscope/errors.hpp"

namespace kscope::detail {
namespace {

// "void ns::saxpy<float>(int, float*)" -> "ns::saxpy<float>"
std::string without_signature(const std::string& kernel) {
  std::string name = kernel.substr(0, kernel.find('('));
  // The return type, if any, is separated by the last space outside template brackets.
  int depth = 0;
  std::size_t cut = std::string::npos;
  for (std::size_t i = 0; i < name.size(); ++i) {
    if (name[i] == '<') ++depth;
    else if (name[i] == '>') --depth;
    else if (name[i] == ' ' && depth == 0) cut = i;
  }
  return cut == std::string::npos ? name : name.substr(cut + 1);
}

std::string without_template(const std::string& name) { return name.substr(0, name.find('<')); }

std::string joined(const std::vector<KernelMeasurement>& kernels) {
  std::string out;
  for (const auto& k : kernels) out += (out.empty() ? "" : "|") + k.name;
  return out;
}

std::string listed(const std::vector<KernelMeasurement>& kernels) {
  std::string out;
  for (const auto& k : kernels) out += "\n  - " + k.name;
  return out;
}

// From the first kernel's start to the last kernel's end, when the backend timed every kernel.
std::optional<double> span_of(const std::vector<KernelMeasurement>& kernels) {
  std::uint64_t first = std::numeric_limits<std::uint64_t>::max(), last = 0;
  for (const auto& k : kernels) {
    if (!k.gpu_time) return std::nullopt;
    first = std::min(first, k.gpu_time->start_ns);
    last = std::max(last, k.gpu_time->end_ns);
  }
  return static_cast<double>(last - first);
}

// The time during which two or more of the kernels ran at once, from their GPU timestamps.
double overlap_of(const std::vector<KernelMeasurement>& kernels) {
  std::vector<GpuInterval> spans;
  for (const auto& k : kernels) {
    if (!k.gpu_time) return NAN;
    spans.push_back(*k.gpu_time);
  }
  std::sort(spans.begin(), spans.end(), [](const GpuInterval& a, const GpuInterval& b) { return a.start_ns < b.start_ns; });
  std::uint64_t summed = 0, covered = 0, reached = 0;  // covered: the union's length so far, up to `reached`
  for (const GpuInterval& s : spans) {
    summed += s.end_ns - s.start_ns;
    if (s.end_ns > reached) {
      covered += s.end_ns - std::max(s.start_ns, reached);
      reached = s.end_ns;
    }
  }
  return static_cast<double>(summed - covered);
}

}  // namespace

CallbackFailure::CallbackFailure(std::string callback, std::exception_ptr cause)
    : std::runtime_error("in " + callback + ": " + exception_message(cause)),
      callback_(std::move(callback)),
      cause_(std::move(cause)) {}

bool kernel_matches(const std::string& kernel, const std::string& pattern) {
  if (kernel == pattern) return true;
  const std::string bare = without_signature(kernel);
  return bare == pattern || without_template(bare) == pattern;
}

std::vector<RegionMeasurement> attribute_run(const std::vector<RegionRecord>& regions, const RunMeasurement& measured,
                                             std::size_t metric_count, const Settings& settings,
                                             AttributionRules rules) {
  const bool range = settings.replay_mode == ReplayMode::range;
  std::vector<RegionMeasurement> out;
  for (std::size_t r = 0; r < regions.size(); ++r) {
    RegionMeasurement m;
    m.annotation = regions[r].name;
    if (regions[r].failed) {
      m.failed = true;
      m.failure_reason = regions[r].reason;
      m.values.assign(metric_count, NAN);
      out.push_back(std::move(m));
      continue;
    }
    const std::vector<KernelMeasurement> all = r < measured.size() ? measured[r] : std::vector<KernelMeasurement>{};
    std::vector<KernelMeasurement> kept;
    for (const auto& k : all) {
      const bool ignored = std::any_of(settings.ignore_kernel_list.begin(), settings.ignore_kernel_list.end(),
                                       [&](const std::string& p) { return kernel_matches(k.name, p); });
      if (!ignored) kept.push_back(k);
    }
    if (kept.empty() && all.empty() && range && rules.empty_range_measures_zero && metric_count == 1) {
      m.kernel = "range";
      m.values = {0.0};
      m.overlap_ns = 0;
      out.push_back(std::move(m));
      continue;
    }
    // Each message starts with Nsight Python's sentence for the case (its users match on it).
    if (kept.empty()) {
      if (!all.empty()) {
        std::vector<std::string> unmatched;  // perhaps misspelt: the kernel meant to be kept was named instead
        for (const auto& p : settings.ignore_kernel_list)
          if (std::none_of(all.begin(), all.end(), [&](const KernelMeasurement& k) { return kernel_matches(k.name, p); }))
            unmatched.push_back(p);
        throw KernelCountError("No kernels were profiled in annotation '" + cut(m.annotation) +
                               "': every kernel it launched is in ignore_kernel_list:" + listed(all) +
                               "\nremove one of them from the list, or remove the annotation" +
                               (unmatched.empty() ? std::string()
                                                  : " (" + option("ignore_kernel_list") + "'s " + quoted_list(unmatched) +
                                                        " matched none of its kernels: a misspelt name?)"));
      }
      throw KernelCountError("No kernels were profiled in annotation '" + cut(m.annotation) +
                             "' in this run: an annotated region must launch at least one GPU kernel between its "
                             "start and end. Check that the launch happens inside the region (not before it, not "
                             "skipped by a condition or an empty size)");
    }
    m.overlap_ns = overlap_of(kept);
    for (const auto& k : all)  // a backend that times the region gives one measurement for it
      if (!std::isnan(k.host_gap_ns)) m.host_gap_ns = k.host_gap_ns, m.first_work = k.first_work;
    if (range) {
      m.kernel = "range";  // as Nsight Compute names a range replay's result
      if (const auto span = span_of(kept)) {
        if (metric_count != 1)
          throw InternalError("a backend that times kernels measured " + std::to_string(metric_count) +
                              " metrics; range replay takes the span as its one duration (kscope bug: please "
                              "report it with this message)");
        m.values = {*span};
        out.push_back(std::move(m));
        continue;
      }
    }
    if (kept.size() > 1 && !settings.combine_kernel_metrics) {
      throw KernelCountError("More than one (total=" + std::to_string(kept.size()) + ") kernel is launched within the " +
                             cut(m.annotation) + " annotation (in one run):" + listed(kept) +
                             "\nkscope measures one kernel per annotation unless told how to combine them. Either "
                             "set " + option("combine_kernel_metrics") +
                             spell(" (e.g. std::plus<double>{} to add durations)",
                                   "=lambda a, b: a + b (to add durations)") +
                             ", measure the region as one range with " + option("replay_mode") +
                             spell(" = ReplayMode::range", "='range'") + ", list the extra kernels in " +
                             option("ignore_kernel_list") + ", or give each kernel its own annotation");
    }
    if (!range) m.kernel = joined(kept);
    m.values = kept.front().values;
    try {
      for (std::size_t k = 1; k < kept.size(); ++k)
        for (std::size_t v = 0; v < metric_count; ++v)
          m.values[v] = settings.combine_kernel_metrics(m.values[v], kept[k].values[v]);
    } catch (...) {
      throw CallbackFailure(option("combine_kernel_metrics"), std::current_exception());
    }
    out.push_back(std::move(m));
  }
  return out;
}

}  // namespace kscope::detail

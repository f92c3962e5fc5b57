#include "core/attribution.hpp"

#include <algorithm>
#include <cmath>

#include "core/caller.hpp"
#include "core/exception_message.hpp"
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
                                             std::size_t metric_count, const Settings& settings) {
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
    if (kept.empty()) {
      if (!all.empty()) {
        throw AnnotationError("annotation '" + m.annotation + "': every kernel it launched is in ignore_kernel_list:" +
                              listed(all) + "\nremove one of them from the list, or remove the annotation");
      }
      throw AnnotationError("annotation '" + m.annotation +
                            "' launched no kernel in this run. An annotated region must launch at least one "
                            "GPU kernel between its start and end: check that the launch happens inside the "
                            "region (not before it, not skipped by a condition or an empty size)");
    }
    if (kept.size() > 1 && !settings.combine_kernel_metrics) {
      throw AnnotationError("annotation '" + m.annotation + "' launched " + std::to_string(kept.size()) +
                            " kernels in one run:" + listed(kept) +
                            "\nkscope measures one kernel per annotation unless told how to combine them. Either "
                            "set " + option("combine_kernel_metrics") +
                            spell(" (e.g. std::plus<double>{} to add durations)",
                                  "=lambda a, b: a + b (to add durations)") +
                            ", list the extra kernels in " + option("ignore_kernel_list") +
                            ", or give each kernel its own annotation");
    }
    m.kernel = joined(kept);
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

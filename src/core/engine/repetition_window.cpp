#include "core/engine/repetition_window.hpp"

#include <algorithm>
#include <cmath>

#include "core/model/caller_language.hpp"
#include "core/model/suggest.hpp"
#include "kscope/errors.hpp"

namespace kscope::detail {
namespace {

std::string names_of(const std::vector<RegionRecord>& regions) {
  std::vector<std::string> names;
  for (const auto& r : regions) names.push_back(r.name);
  return names.empty() ? "none" : quoted_list(names);
}

}  // namespace

RepetitionWindow::RepetitionWindow(std::size_t kernel_metrics, const Settings& settings)
    : kernel_metrics_(kernel_metrics), settings_(settings), sums_(kernel_metrics, 0.0) {}

void RepetitionWindow::add(const std::vector<RegionRecord>& regions, const RunMeasurement& measured) {
  if (regions.size() != 1 || (!regions_.empty() && regions.front().name != regions_.front().name))
    throw AnnotationUseError("the energy metrics measure the whole GPU over back-to-back runs, so every run must open "
                          "exactly one annotation, the same one; this run opened " + names_of(regions) +
                          (regions_.empty() ? "" : " after " + names_of(regions_)) +
                          ". Measure each annotation in its own " +
                          spell("profile() call", "function") + ", or make the choice a config axis");
  const RegionMeasurement region = attribute_run(regions, measured, kernel_metrics_, settings_).front();
  if (regions_.empty()) regions_ = regions;
  if (region.failed && !regions_.front().failed) regions_.front() = regions.front();
  if (std::find(kernels_.begin(), kernels_.end(), region.kernel) == kernels_.end()) kernels_.push_back(region.kernel);
  for (std::size_t v = 0; v < kernel_metrics_; ++v) sums_[v] += region.values[v];
  ++runs_;
}

std::vector<RegionMeasurement> RepetitionWindow::sample(const std::vector<double>& energy) const {
  RegionMeasurement m;
  m.annotation = regions_.front().name;
  for (const auto& k : kernels_) m.kernel += (m.kernel.empty() ? "" : "|") + k;
  m.failed = regions_.front().failed;
  m.failure_reason = regions_.front().reason;
  for (double sum : sums_) m.values.push_back(m.failed ? NAN : sum / static_cast<double>(runs_));
  for (double e : energy) m.values.push_back(m.failed ? NAN : e);
  return {m};
}

}  // namespace kscope::detail

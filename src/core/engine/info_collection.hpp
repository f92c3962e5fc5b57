#pragma once
// The info collectors of a session (kscope/info_collector.hpp): the checks of their names, the
// calls at each scope's phase with the values kept for the run in progress, and their columns in
// the results.
#include <cstddef>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "core/model/sample_store.hpp"
#include "kscope/detail/collector_names.hpp"  // check_collector_names_against_axes
#include "kscope/info_collector.hpp"
#include "kscope/measurement_backend.hpp"
#include "kscope/results.hpp"

namespace kscope::detail {

// Throws ConfigError for a collector without a name or callback, a name used twice, or a name of a
// table column (or of another collector's _Avg/_Std/_Min/_Max columns). Settings::validate's check.
void check_info_collectors(const std::vector<InfoCollector>& collectors);

class InfoCollection {
 public:
  // A collector that throws: with InfoCollectorErrors::warn its value is missing and the first
  // failure of each collector is a warning; with raise the exception goes on.
  InfoCollection(const std::vector<InfoCollector>& collectors, InfoCollectorErrors errors);

  bool empty() const { return collectors_.empty(); }

  // Each throws what a collector throws (InfoCollectorErrors::raise), after failure() names it.
  void collect_once();
  void start_config(const Config& config);
  // A run starts: recorded runs in their first pass call the run collectors now, and the
  // annotation collectors at each annotation_opened() until end_run(); other runs call none.
  void start_run(const Config& config, const RunContext& run);
  void annotation_opened(std::size_t region, const std::string& name);
  // The run's values: per region index (of `regions` regions), one cell per collector.
  std::vector<std::vector<Cell>> end_run(std::size_t regions);

  // "info collector 'x' (run scope)" for the collector that threw last in this run; empty if none.
  std::string failure() const;

 private:
  Cell call(std::size_t collector, const CollectionContext& context);

  const std::vector<InfoCollector>& collectors_;
  InfoCollectorErrors errors_;
  mutable std::mutex mutex_;  // annotations may be opened on any thread
  std::set<std::size_t> warned_;  // collectors whose failure was reported
  std::vector<Cell> once_, config_, run_;
  std::vector<std::vector<Cell>> annotations_;  // per region index
  const Config* config_in_progress_ = nullptr;
  std::size_t recorded_run_ = 0;
  bool collecting_ = false;  // in a recorded run's first pass
  std::string failed_;
};

// How the collectors appear in the summary, decided from all the values recorded (`samples`' info).
struct InfoLayout {
  InfoColumns columns;
  std::vector<bool> spread;  // per collector: <name>_Avg, _Std, _Min, _Max rather than one column
};
InfoLayout info_layout(const std::vector<InfoCollector>& collectors, const SampleStore& samples);
// A summary row's collector cells, in the layout's column order: from `runs`, the info cells of the
// samples that enter its statistics, and `first`, those of its first sample (for the once scope's value).
std::vector<Cell> summarize_info(const std::vector<InfoCollector>& collectors, const InfoLayout& layout,
                                 const std::vector<const std::vector<Cell>*>& runs, const std::vector<Cell>& first);

}  // namespace kscope::detail

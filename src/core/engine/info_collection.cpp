#include "core/engine/info_collection.hpp"

#include <algorithm>
#include <cmath>
#include <set>

#include "core/model/caller_language.hpp"
#include "core/model/exception_message.hpp"
#include "core/model/interrupt_scope.hpp"
#include "core/model/log.hpp"
#include "core/model/suggest.hpp"
#include "kscope/columns.hpp"
#include "kscope/detail/enum_names.hpp"
#include "kscope/errors.hpp"
#include "kscope/statistics.hpp"

namespace kscope::detail {
namespace {

// The columns a numeric collector of another scope than once gets in the summary.
const char* const kSpreadSuffixes[] = {"_Avg", "_Std", "_Min", "_Max"};

std::vector<std::string> reserved_columns() {
  std::set<std::string> names{"Annotation"};
  for (const auto& c : summary_columns()) names.insert(c.name);
  for (const auto& c : sample_columns()) names.insert(c.name);
  return {names.begin(), names.end()};
}

bool is_number(const Cell& c) { return std::holds_alternative<std::int64_t>(c) || std::holds_alternative<double>(c); }

double number_of(const Cell& c) {
  if (const auto* i = std::get_if<std::int64_t>(&c)) return static_cast<double>(*i);
  if (const auto* d = std::get_if<double>(&c)) return *d;
  if (const auto* b = std::get_if<bool>(&c)) return *b ? 1.0 : 0.0;
  return NAN;
}

Cell number_cell(double v) { return std::isnan(v) ? Cell{} : Cell{v}; }

}  // namespace

void check_info_collectors(const std::vector<InfoCollector>& collectors) {
  const std::string option = detail::option("info_collectors");
  const std::vector<std::string> reserved = reserved_columns();
  std::set<std::string> seen;
  for (const auto& c : collectors) {
    if (c.name.empty())
      throw ConfigError(option + " has a collector without a name: give each one a name, which becomes its column");
    if (!c.collect) throw ConfigError(option + " has collector '" + c.name + "' without a collect function");
    if (!seen.insert(c.name).second)
      throw ConfigError("Duplicate info collector name '" + c.name +
                        "'. Each collector must have a unique name (its name becomes its column): rename one");
    if (std::find(reserved.begin(), reserved.end(), c.name) != reserved.end())
      throw ConfigError("Info collector name '" + c.name + "' collides with a reserved profiler column. Reserved " +
                        "names: " + quoted_list(reserved) + ". Rename the collector");
  }
  for (const auto& c : collectors)
    for (const char* suffix : kSpreadSuffixes)
      if (seen.count(c.name + suffix))
        throw ConfigError("Info collector name '" + c.name + suffix + "' collides with a column of collector '" +
                          c.name + "' (a numeric one has " + c.name + "_Avg, _Std, _Min and _Max): rename one of them");
}

void check_collector_names_against_axes(const std::vector<std::string>& collector_names,
                                        const std::vector<std::string>& axis_names) {
  for (const auto& name : collector_names)
    if (std::find(axis_names.begin(), axis_names.end(), name) != axis_names.end())
      throw ConfigError("Info collector name '" + name + "' collides with " +
                        spell("the config axis '", "the parameter '") + name +
                        "', whose column it would shadow: rename the collector");
}

InfoCollection::InfoCollection(const std::vector<InfoCollector>& collectors, InfoCollectorErrors errors)
    : collectors_(collectors),
      errors_(errors),
      once_(collectors.size()),
      config_(collectors.size()),
      run_(collectors.size()) {}

Cell InfoCollection::call(std::size_t collector, const CollectionContext& context) {
  try {
    return collectors_[collector].collect(context);
  } catch (...) {
    const InfoCollector& c = collectors_[collector];
    std::unique_lock lock(mutex_);
    // Named while the failure (or its warning, which a front end may turn into an error) goes on.
    failed_ = "info collector '" + c.name + "' (" + to_string(c.scope) + " scope)";
    // Ctrl-C reaching the collector (Python's KeyboardInterrupt) stops the sweep as interrupted, unwarned.
    if (errors_ == InfoCollectorErrors::raise || interrupt_requested()) throw;
    const bool first = warned_.insert(collector).second;
    lock.unlock();
    if (first)
      log_warning("Info collector '" + c.name + "' (" + to_string(c.scope) + " scope) raised " +
                      exception_message(std::current_exception()) +
                      ". Its value is missing where it fails; " + option("info_collector_errors") +
                      spell(" = InfoCollectorErrors::raise", "='raise'") + " stops the sweep instead",
                  WarningKind::run);
    lock.lock();
    failed_.clear();
    return {};
  }
}

void InfoCollection::collect_once() {
  for (std::size_t c = 0; c < collectors_.size(); ++c)
    if (collectors_[c].scope == CollectionScope::once) once_[c] = call(c, {});
}

void InfoCollection::start_config(const Config& config) {
  for (std::size_t c = 0; c < collectors_.size(); ++c)
    if (collectors_[c].scope == CollectionScope::config) config_[c] = call(c, {&config, 0, ""});
}

void InfoCollection::start_run(const Config& config, const RunContext& run) {
  {
    std::lock_guard lock(mutex_);
    failed_.clear();
    annotations_.clear();
    collecting_ = false;
  }
  if (empty() || !run.recorded || run.pass != 1) return;
  for (std::size_t c = 0; c < collectors_.size(); ++c)
    if (collectors_[c].scope == CollectionScope::run) run_[c] = call(c, {&config, run.recorded_run, ""});
  std::lock_guard lock(mutex_);
  config_in_progress_ = &config;
  recorded_run_ = run.recorded_run;
  collecting_ = true;
}

void InfoCollection::annotation_opened(std::size_t region, const std::string& name) {
  const Config* config = nullptr;
  std::size_t run = 0;
  {
    std::lock_guard lock(mutex_);
    if (!collecting_) return;
    config = config_in_progress_;
    run = recorded_run_;
  }
  std::vector<Cell> values(collectors_.size());
  for (std::size_t c = 0; c < collectors_.size(); ++c)
    if (collectors_[c].scope == CollectionScope::annotation) values[c] = call(c, {config, run, name});
  std::lock_guard lock(mutex_);
  if (annotations_.size() <= region) annotations_.resize(region + 1);
  annotations_[region] = std::move(values);
}

std::vector<std::vector<Cell>> InfoCollection::end_run(std::size_t regions) {
  std::lock_guard lock(mutex_);
  collecting_ = false;
  if (empty()) return {};
  std::vector<std::vector<Cell>> out(regions, std::vector<Cell>(collectors_.size()));
  for (std::size_t r = 0; r < regions; ++r) {
    for (std::size_t c = 0; c < collectors_.size(); ++c) {
      switch (collectors_[c].scope) {
        case CollectionScope::once: out[r][c] = once_[c]; break;
        case CollectionScope::config: out[r][c] = config_[c]; break;
        case CollectionScope::run: out[r][c] = run_[c]; break;
        case CollectionScope::annotation:
          if (r < annotations_.size() && c < annotations_[r].size()) out[r][c] = annotations_[r][c];
          break;
      }
    }
  }
  return out;
}

std::string InfoCollection::failure() const {
  std::lock_guard lock(mutex_);
  return failed_;
}

InfoLayout info_layout(const std::vector<InfoCollector>& collectors, const SampleStore& samples) {
  // The info rows the samples hold (the store may hold rows of runs that were not kept).
  std::vector<bool> held(samples.info_count(), false);
  for (std::size_t i = 0; i < samples.size(); ++i) held[samples.info_of(i)] = true;
  InfoLayout layout;
  for (std::size_t c = 0; c < collectors.size(); ++c) {
    // Numeric as pandas decides for a column: every value present is a number, or every one a boolean.
    bool numbers = true, booleans = true, any = false;
    for (std::size_t r = 0; r < held.size(); ++r) {
      const std::vector<Cell>& info = samples.info(static_cast<SampleStore::Id>(r));
      if (!held[r] || c >= info.size() || std::holds_alternative<std::monostate>(info[c])) continue;
      any = true;
      numbers = numbers && is_number(info[c]);
      booleans = booleans && std::holds_alternative<bool>(info[c]);
    }
    const std::string& name = collectors[c].name;
    const bool spread = collectors[c].scope != CollectionScope::once && any && (numbers || booleans);
    layout.spread.push_back(spread);
    layout.columns.samples.push_back(name);
    if (!spread) {
      layout.columns.summary.push_back(name);
      continue;
    }
    for (const char* suffix : kSpreadSuffixes) layout.columns.summary.push_back(name + suffix);
  }
  return layout;
}

std::vector<Cell> summarize_info(const std::vector<InfoCollector>& collectors, const InfoLayout& layout,
                                 const std::vector<const std::vector<Cell>*>& runs, const std::vector<Cell>& first) {
  std::vector<Cell> out;
  for (std::size_t c = 0; c < collectors.size(); ++c) {
    if (collectors[c].scope == CollectionScope::once) {
      out.push_back(c < first.size() ? first[c] : Cell{});
      continue;
    }
    if (!layout.spread[c]) {  // the first value present, as pandas' "first"
      Cell value;
      for (const std::vector<Cell>* info : runs)
        if (c < info->size() && !std::holds_alternative<std::monostate>((*info)[c])) {
          value = (*info)[c];
          break;
        }
      out.push_back(value);
      continue;
    }
    std::vector<double> values;
    for (const std::vector<Cell>* info : runs)
      if (c < info->size()) values.push_back(number_of((*info)[c]));
    const SampleStatistics stats = summarize(values, 1.0);
    const bool none = stats.count == 0;
    out.push_back(none ? Cell{} : number_cell(stats.mean));
    out.push_back(number_cell(stats.stddev));
    out.push_back(none ? Cell{} : number_cell(stats.min));
    out.push_back(none ? Cell{} : number_cell(stats.max));
  }
  return out;
}

}  // namespace kscope::detail

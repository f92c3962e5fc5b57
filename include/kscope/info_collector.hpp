#pragma once
// Custom information collectors (Nsight Python's, experimental there): user callbacks whose values
// become extra columns of the results, e.g. the driver version, a temperature per run, or a
// counter of the annotations entered. Register them on Settings::info_collectors:
//
//   settings.info_collectors.push_back({"gpu_temp_c", CollectionScope::run,
//                                       [](const CollectionContext&) { return read_temperature(); }});
//
// When each scope's callback runs (never for warm-up runs, never again for replay passes, so a
// counting collector counts exactly as in Nsight Python):
//   once        once per profile() call, before the first config (context.config is null)
//   config      once per config, before its first run
//   run         before each recorded run's body
//   annotation  each time a recorded run opens an annotation, before the region starts
// A callback that throws leaves its value missing (an empty cell) where it failed, with one warning
// per collector, and the sweep goes on, as in Nsight Python; with Settings::info_collector_errors =
// InfoCollectorErrors::raise it fails the sweep like the body would: a SweepError naming the
// collector, with everything measured before it.
//
// Columns, after the schema's (kscope/columns.hpp), in registration order: the samples table has
// one column per collector (its value for that run and annotation). The summary table has, per
// collector, one column with its name for the once scope and for values that are not numbers (the
// first value of the row's runs), else <name>_Avg, <name>_Std (n - 1), <name>_Min and <name>_Max
// over the runs that enter the row's statistics. A collector's column is numeric when all its
// values are numbers (or all are booleans); missing values are empty.
#include <cstddef>
#include <functional>
#include <string>

#include "kscope/config.hpp"
#include "kscope/table.hpp"

namespace kscope {

enum class CollectionScope { once, config, run, annotation };
std::string to_string(CollectionScope scope);  // "once", "config", "run", "annotation"

// Where a collector is called.
struct CollectionContext {
  const Config* config = nullptr;  // null for the once scope
  std::size_t run = 0;             // run and annotation scopes: the recorded run (0-based)
  std::string annotation;          // annotation scope: the annotation being opened
};

// A callback whose values become columns of the results (Settings::info_collectors), as Nsight
// Python's custom information collectors: called once, per config, per run or per annotation.
struct InfoCollector {
  std::string name;  // the column (or column prefix) in the results
  CollectionScope scope = CollectionScope::once;  // when it is called: once, per config, per run or per annotation
  // Its value: a number, text, a boolean, or an empty Cell for "none".
  std::function<Cell(const CollectionContext&)> collect;
};

}  // namespace kscope

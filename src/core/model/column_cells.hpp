#pragma once
// The cell of every column of kscope::summary_columns() and sample_columns(), in their order.
#include <cstddef>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "core/model/sample_text.hpp"
#include "kscope/columns.hpp"
#include "kscope/detail/config_cells.hpp"
#include "kscope/results.hpp"
#include "kscope/summary_statistics.hpp"

namespace kscope::detail {

template <typename Row>
struct ColumnDefinition {
  ColumnSpec spec;
  std::function<Cell(const Row&, const SessionInfo&)> cell;
  // The inverse of cell, for the rows kscope reads back (results files, a resumed sweep's samples);
  // false for a cell the column never holds. Empty for the session facts (the same on every row,
  // kept or checked once).
  std::function<bool(Row&, const Cell&)> read = {};
  SamplePart part = SamplePart::row;  // the part of the row the cell shows (session: a session fact)
  std::string expected = {};  // what a cell read back must be, where its type does not say it all
};

// Made anew after a statistic is registered (kscope/summary_statistics.hpp).
const std::vector<ColumnDefinition<SummaryRow>>& summary_column_definitions();
const std::vector<ColumnDefinition<SampleRow>>& sample_column_definitions();

// How many statistics the table holds (src/core/model/summary_statistics.cpp), without copying it.
std::size_t summary_statistic_count();

// make()'s value, kept until a statistic is registered (the table only grows): what is made from
// the summary columns. Each call site (its lambda's type) keeps its own.
template <typename Make>
const auto& remade_with_statistics(Make make) {
  static std::mutex mutex;
  static std::optional<decltype(make())> value;
  static std::size_t statistics = 0;
  const std::lock_guard lock(mutex);
  if (const std::size_t now = summary_statistic_count(); !value || statistics != now) {
    statistics = now;
    value = make();
  }
  return *value;
}

// Annotation, the config axes, sample_columns(), then the info collectors' columns: the header of
// Results::samples_table and of a streamed sweep's samples.csv.
std::vector<std::string> samples_header(const std::vector<Config>& configs, const std::vector<std::string>& info_columns);
// The same rows as samples.csv text, made from the sample store: Results::write_samples_csv, and
// the rows a streamed sweep appends to its samples.csv. `configs` must outlive it.
SampleText samples_csv_text(const std::vector<Config>& configs, std::size_t info_columns);
// Throws Error (as write_csv for a table row of the wrong width) unless every sample has one info
// cell per info column.
void check_info_cells(const Samples& samples, std::size_t table_columns, std::size_t info_columns);

}  // namespace kscope::detail

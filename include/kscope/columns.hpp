#pragma once
// The columns of kscope's tables, defined once. The summary and samples tables start with
// "Annotation" and one column per config axis, followed by these; every writer (console, CSV,
// JSON) and the Python package take names, order and types from here.
#include <string>
#include <utility>
#include <vector>

namespace kscope {

enum class ColumnType {
  text,
  integer,
  optional_integer,  // an integer, or empty where undefined
  real,              // empty (NaN) where undefined
  boolean,
  optional_boolean,  // true, false, or empty where undefined
  baseline,          // false, or the name of the baseline annotation (Normalized)
};

// A column of a table kscope writes: its name and the type of its cells.
struct ColumnSpec {
  std::string name;  // as in the CSV header and the results file
  ColumnType type;   // what its cells hold
};

std::string to_string(ColumnType type);  // "text", "integer", "real", "boolean", ...

const std::vector<ColumnSpec>& summary_columns();
const std::vector<ColumnSpec>& sample_columns();
// The summary columns a readable view shows (after Annotation and the axes), with short headers.
const std::vector<std::pair<std::string, std::string>>& console_columns();
// The roofline's columns a readable view adds after those when a row has declared work.
const std::vector<std::pair<std::string, std::string>>& roofline_console_columns();

}  // namespace kscope

#pragma once
// A config value as a table cell, for the front ends that build tables of configs (the Python
// bindings' DataFrames) as the engine's own columns do.
#include "kscope/table.hpp"
#include "kscope/value.hpp"

namespace kscope::detail {

Cell to_cell(const Value& v);

}  // namespace kscope::detail

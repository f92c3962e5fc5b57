#pragma once
// An evaluation's column tables (core/decisions/evaluate.cpp): its rows' and its findings'. Its
// table, the console's view, its results file (io/evaluation_file.cpp) and Python's DataFrames
// are made from them.
#include "core/model/derived_columns.hpp"
#include "kscope/evaluate.hpp"

namespace kscope::detail {

const DerivedColumns<Evaluation, EvaluationRow>& evaluation_table();
const DerivedColumns<Evaluation, FindingRecord>& findings_table();

}  // namespace kscope::detail

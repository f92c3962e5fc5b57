#pragma once
// A Table as JSON, for writers that embed tables in a larger document.
#include <nlohmann/json.hpp>

#include "kscope/table.hpp"

namespace kscope::detail {

// An array with one object per row, keys in column order. Missing cells, NaN and infinities
// become null, so the result is strict JSON. Throws Error for a malformed table.
nlohmann::ordered_json table_to_json(const Table& table);

}  // namespace kscope::detail

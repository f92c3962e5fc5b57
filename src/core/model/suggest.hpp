#pragma once
// "Did you mean" support: the known names closest to a misspelt one; names and numbers in messages.
#include <string>
#include <vector>

namespace kscope::detail {

// Levenshtein distance, case-insensitive: users mistype case as often as letters.
std::size_t edit_distance(const std::string& a, const std::string& b);

// Up to `limit` candidates ordered by edit distance to `wanted` (closest first).
std::vector<std::string> closest_names(const std::string& wanted,
                                       const std::vector<std::string>& candidates,
                                       std::size_t limit = 3);

// "'a', 'b', 'c'" for messages.
std::string quoted_list(const std::vector<std::string>& names);
// "['a', 'b']": a list as Python writes it (and readable in any language).
std::string python_list(const std::vector<std::string>& names);
// A number with `decimals` digits after the point, for messages.
std::string fixed(double value, int decimals);
// A number as printf's %g writes it ("0", "2.5", "1e+20"), for messages.
std::string number_text(double value);
// A number as printf writes it with `pattern`, a conversion of one double ("%.3g", "%+.1f%%").
std::string formatted(const char* pattern, double value);

}  // namespace kscope::detail

#pragma once
// The CSV that `ncu --import R --csv --page raw --print-units base` prints: row 1 the column names
// ("ID", "Process ID", ..., "Kernel Name", ..., then the metrics in alphabetical order), row 2 their
// units ("" for the fixed columns and unitless metrics), then one row per profiled kernel (or
// range, in range replay) in profiling order. Every field is quoted; numbers carry thousands
// separators ("1,980,000.00"); a metric ncu could not collect reads "n/a".
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace kscope::ncu {

struct NcuCsv {
  std::vector<std::string> columns;
  std::vector<std::string> units;              // one per column; all empty when there is no units row
  std::vector<std::vector<std::string>> rows;  // one field per column

  std::optional<std::size_t> find(const std::string& column) const;
};

// Throws BackendError, naming `source` and the line, for text that is not such a table. Lines
// before the header that start with "==" (ncu's own ==PROF== / ==WARNING== messages) are skipped.
NcuCsv parse_ncu_csv(const std::string& text, const std::string& source);

// A number as ncu prints it ("1,234.5", "5792", "-3.2e+05"); nullopt for text ("n/a", "No-CC").
std::optional<double> parse_ncu_number(const std::string& field);

// True for ncu's "value not available" ("n/a").
bool is_not_available(const std::string& field);

}  // namespace kscope::ncu

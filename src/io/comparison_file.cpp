// A comparison as JSON: its options, its warnings, the gate's conclusion and its table's rows (as
// kscope writes tables in JSON): the comparison.json of its formats (core/decisions/compare.cpp),
// and what `kscope compare --json` prints.
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "base/file_access.hpp"
#include "core/model/json_fields.hpp"
#include "io/json_table.hpp"
#include "kscope/compare.hpp"
#include "kscope/detail/enum_names.hpp"

namespace kscope {
namespace {

using namespace detail::json_fields;

// The options a comparison was made with, as its verdicts read them.
const std::vector<Field<CompareOptions>>& option_fields() {
  static const std::vector<Field<CompareOptions>> fields{
      field<CompareOptions>("threshold_pct", [](auto& o) -> auto& { return o.threshold_pct; }),
      field<CompareOptions>("alpha", [](auto& o) -> auto& { return o.alpha; }),
      field<CompareOptions>("min_samples", [](auto& o) -> auto& { return o.min_samples; }),
      field<CompareOptions>("max_rsd_pct", [](auto& o) -> auto& { return o.max_rsd_pct; }),
      field<CompareOptions>("confidence", [](auto& o) -> auto& { return o.confidence; }),
      field<CompareOptions>("resamples", [](auto& o) -> auto& { return o.resamples; }),
      {"seed", [](const CompareOptions& o) { return Written(o.seed); }, {}},
      {"directions",
       [](const CompareOptions& o) {
         Written directions = Written::object();
         for (const auto& [metric, direction] : o.directions) directions[metric] = encode(direction);
         return directions;
       },
       {}},
  };
  return fields;
}

}  // namespace

void Comparison::write_json(std::ostream& out) const {
  Written doc = Written::object();
  doc["options"] = write_object(options, option_fields());
  doc["warnings"] = warnings;
  doc["gate"] = detail::enum_name(gate());
  doc["rows"] = detail::table_to_json(to_table());
  // Invalid UTF-8 in a string (a mangled kernel name, say) becomes U+FFFD instead of throwing.
  out << doc.dump(2, ' ', false, Written::error_handler_t::replace) << "\n";
}

void Comparison::write_json(const std::string& path) const {
  detail::write_whole(path, [&](std::ostream& out) { write_json(out); });
}

}  // namespace kscope

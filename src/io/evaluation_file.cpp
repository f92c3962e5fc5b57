// An Evaluation's file: kscope's results file of its measurements (load_results reads it) with an
// "evaluation" member: the options, field by field, and the rows and findings of its tables, each
// row its config's index and its table's columns (core/decisions/evaluation_tables.hpp, written
// and read back through io/json_columns.hpp), so that a column of the table is in the file.
#include <nlohmann/json.hpp>
#include <ostream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "base/file_access.hpp"
#include "core/decisions/evaluation_tables.hpp"
#include "core/model/caller_language.hpp"
#include "core/model/json_fields.hpp"
#include "io/json_columns.hpp"
#include "io/json_printer.hpp"
#include "io/results_file.hpp"
#include "kscope/errors.hpp"
#include "kscope/evaluate.hpp"

namespace kscope {
namespace {

using namespace detail::json_fields;

// A field whose JSON the two functions give and take.
template <typename Row, typename Write, typename Read_>
Field<Row> custom(std::string key, Write write, Read_ read) {
  return {std::move(key), write, read};
}

Written optional_real(const std::optional<double>& v) { return v ? detail::real_json(*v) : Written(); }
std::optional<double> read_optional_real(const Read& j, const std::string& where) {
  if (j.is_null()) return std::nullopt;
  double v = 0;
  decode(j, v, where);
  return v;
}

const std::vector<Field<EvaluateOptions>>& option_fields() {
  static const std::vector<Field<EvaluateOptions>> fields{
      custom<EvaluateOptions>(
          "rtol", [](const EvaluateOptions& o) { return optional_real(o.rtol); },
          [](EvaluateOptions& o, const Read& j, const std::string& w) { o.rtol = read_optional_real(j, w); }),
      custom<EvaluateOptions>(
          "atol", [](const EvaluateOptions& o) { return optional_real(o.atol); },
          [](EvaluateOptions& o, const Read& j, const std::string& w) { o.atol = read_optional_real(j, w); }),
      field<EvaluateOptions>("threshold_pct", [](auto& o) -> auto& { return o.threshold_pct; }),
      field<EvaluateOptions>("confidence", [](auto& o) -> auto& { return o.confidence; }),
      custom<EvaluateOptions>(
          "seed", [](const EvaluateOptions& o) { return Written(o.seed); },
          [](EvaluateOptions& o, const Read& j, const std::string& w) { o.seed = read_unsigned(j, w); }),
      added_later(field<EvaluateOptions>("checked_runs", [](auto& o) -> auto& { return o.checked_runs; })),
  };
  return fields;
}

// The rows of a derived result, each as its fields write it.
template <typename Row>
Written rows_json(const std::vector<Row>& rows, const std::vector<Field<Row>>& fields) {
  Written out = Written::array();
  for (const Row& row : rows) out.push_back(write_object(row, fields));
  return out;
}

// Files written before an evaluation's rows were their table's cells hold Findings as a list of
// names, where the table's cell joins them with commas.
nlohmann::json findings_joined(nlohmann::json section) {
  const auto rows = section.find("rows");
  if (rows == section.end() || !rows->is_array()) return section;
  for (nlohmann::json& row : *rows) {
    const auto findings = row.find("Findings");
    if (findings == row.end() || !findings->is_array()) continue;
    std::string joined;
    for (const nlohmann::json& name : *findings)
      joined += (joined.empty() ? "" : ",") + (name.is_string() ? name.get<std::string>() : name.dump());
    *findings = joined;
  }
  return section;
}

}  // namespace

void Evaluation::write_json(std::ostream& out) const {
  detail::write_results(measurements_, out, [&](std::ostream& o) {
    Written section;
    section["options"] = write_object(options_, option_fields());
    section["rows"] = rows_json(rows_, derived_fields(detail::evaluation_table(), this));
    section["findings"] = rows_json(findings_, derived_fields(detail::findings_table(), this));
    std::string text = ",\n \"evaluation\": ";
    detail::append_json(text, section, 1);
    o << text;
  });
}

void Evaluation::write_json(const std::string& path) const {
  detail::write_whole(path, [&](std::ostream& out) { write_json(out); });
}

namespace {

// What writes the file load_evaluation reads, for its messages.
std::string evaluation_writer() { return detail::spell("Evaluation::write_json", "EvaluationResults.save"); }

}  // namespace

Evaluation load_evaluation(const std::string& path) {
  std::istringstream in(detail::read_results_text(path, "a file written by " + evaluation_writer()));
  return load_evaluation(in, "'" + path + "'");
}

namespace {

// The evaluation a results file holds in its "evaluation" member, of the measurements read from it.
Evaluation evaluation_from(const nlohmann::json& section, Results measurements,
                           const std::string& file) {
  const std::string where = file + ": \"evaluation\"";
  if (!section.is_object()) bad_value(where, "an object", section);
  EvaluateOptions options;
  options.checked_runs = 0;  // a file from before checked_runs: every run was read
  const auto saved_options = section.find("options");
  if (saved_options == section.end()) throw ConfigError(where + " has no \"options\"");
  read_object(*saved_options, options, option_fields(), where + " \"options\"");
  const std::size_t configs = measurements.configs().size();
  std::vector<EvaluationRow> rows =
      read_config_rows(findings_joined(section), "rows", derived_fields(detail::evaluation_table()), configs, where);
  std::vector<FindingRecord> findings =
      read_config_rows(section, "findings", derived_fields(detail::findings_table()), configs, where);
  return Evaluation(std::move(measurements), std::move(rows), std::move(findings), std::move(options));
}

}  // namespace

Evaluation load_evaluation(std::istream& in, const std::string& file) {
  const nlohmann::json doc = detail::read_results_document(in, file, evaluation_writer());
  const auto section = doc.find("evaluation");
  if (section == doc.end())
    throw ConfigError(file + " holds the results of a profile, not an evaluation: load it with " +
                      detail::spell("load_results", "kscope.load") + ", or give a file written by " +
                      evaluation_writer());
  return evaluation_from(*section, detail::results_from(doc, file, evaluation_writer()), file);
}

}  // namespace kscope

// An Evaluation's file: kscope's results file of its measurements (load_results reads it) with an
// "evaluation" member: the options, one row per config and the findings, field by field.
#include <nlohmann/json.hpp>
#include <ostream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "base/file_access.hpp"
#include "core/model/caller_language.hpp"
#include "core/model/json_fields.hpp"
#include "io/json_printer.hpp"
#include "io/results_file.hpp"
#include "kscope/detail/enum_names.hpp"
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

// A value of an enumeration on the name table (kscope/detail/enum_names.hpp).
template <typename E>
E read_named(const Read& j, const std::string& where) {
  if (j.is_string())
    if (const auto value = detail::enum_named<E>(j.get<std::string>())) return *value;
  bad_value(where, detail::enum_choices<E>("\"").c_str(), j);
}

Finding read_finding(const Read& j, const std::string& where) {
  if (j.is_string())
    if (const auto finding = finding_named(j.get<std::string>())) return *finding;
  std::string names;
  for (const Finding f : all_findings()) names += (names.empty() ? "\"" : ", \"") + to_string(f) + "\"";
  bad_value(where, ("one of " + names).c_str(), j);
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

const std::vector<Field<EvaluationRow>>& row_fields() {
  static const std::vector<Field<EvaluationRow>> fields{
      field<EvaluationRow>("Config", [](auto& r) -> auto& { return r.config_index; }),
      field<EvaluationRow>("Runs", [](auto& r) -> auto& { return r.runs; }),
      field<EvaluationRow>("ReferenceMedianNs", [](auto& r) -> auto& { return r.reference_median_ns; }),
      field<EvaluationRow>("CandidateMedianNs", [](auto& r) -> auto& { return r.candidate_median_ns; }),
      field<EvaluationRow>("Speedup", [](auto& r) -> auto& { return r.speedup; }),
      field<EvaluationRow>("SpeedupCI_Lower", [](auto& r) -> auto& { return r.speedup_ci_lower; }),
      field<EvaluationRow>("SpeedupCI_Upper", [](auto& r) -> auto& { return r.speedup_ci_upper; }),
      field<EvaluationRow>("Correct", [](auto& r) -> auto& { return r.correct; }),
      field<EvaluationRow>("MaxAbsError", [](auto& r) -> auto& { return r.max_abs_error; }),
      field<EvaluationRow>("MaxRelError", [](auto& r) -> auto& { return r.max_rel_error; }),
      field<EvaluationRow>("CheckedRuns", [](auto& r) -> auto& { return r.checked_runs; }),
      field<EvaluationRow>("MismatchedRuns", [](auto& r) -> auto& { return r.mismatched_runs; }),
      custom<EvaluationRow>(
          "FailingSeed", [](const EvaluationRow& r) { return r.failing_seed ? Written(*r.failing_seed) : Written(); },
          [](EvaluationRow& r, const Read& j, const std::string& w) {
            r.failing_seed = j.is_null() ? std::nullopt : std::optional<std::uint64_t>(read_unsigned(j, w));
          }),
      field<EvaluationRow>("Mismatch", [](auto& r) -> auto& { return r.mismatch; }),
      custom<EvaluationRow>(
          "Findings",
          [](const EvaluationRow& r) {
            Written list = Written::array();
            for (Finding f : r.findings) list.push_back(to_string(f));
            return list;
          },
          [](EvaluationRow& r, const Read& j, const std::string& w) {
            if (!j.is_array()) bad_value(w, "a list of finding names", j);
            r.findings.clear();
            for (const Read& name : j) r.findings.push_back(read_finding(name, w));
          }),
      custom<EvaluationRow>(
          "Verdict", [](const EvaluationRow& r) { return Written(to_string(r.verdict)); },
          [](EvaluationRow& r, const Read& j, const std::string& w) { r.verdict = read_named<EvaluationVerdict>(j, w); }),
      field<EvaluationRow>("Reason", [](auto& r) -> auto& { return r.reason; }),
  };
  return fields;
}

const std::vector<Field<FindingRecord>>& finding_fields() {
  static const std::vector<Field<FindingRecord>> fields{
      field<FindingRecord>("Config", [](auto& f) -> auto& { return f.config_index; }),
      custom<FindingRecord>(
          "Side", [](const FindingRecord& f) { return Written(to_string(f.side)); },
          [](FindingRecord& f, const Read& j, const std::string& w) { f.side = read_named<Side>(j, w); }),
      custom<FindingRecord>(
          "Finding", [](const FindingRecord& f) { return Written(to_string(f.finding)); },
          [](FindingRecord& f, const Read& j, const std::string& w) { f.finding = read_finding(j, w); }),
      field<FindingRecord>("Runs", [](auto& f) -> auto& { return f.runs; }),
      field<FindingRecord>("Detail", [](auto& f) -> auto& { return f.detail; }),
  };
  return fields;
}

}  // namespace

void Evaluation::write_json(std::ostream& out) const {
  detail::write_results(measurements_, out, [&](std::ostream& o) {
    Written section;
    section["options"] = write_object(options_, option_fields());
    Written rows = Written::array();
    for (const EvaluationRow& r : rows_) rows.push_back(write_object(r, row_fields()));
    section["rows"] = std::move(rows);
    Written findings = Written::array();
    for (const FindingRecord& f : findings_) findings.push_back(write_object(f, finding_fields()));
    section["findings"] = std::move(findings);
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
  std::vector<EvaluationRow> rows = read_config_rows(section, "rows", row_fields(), configs, where);
  std::vector<FindingRecord> findings = read_config_rows(section, "findings", finding_fields(), configs, where);
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

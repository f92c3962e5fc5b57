// LineResults' file: kscope's results file of its sweep (load_results reads it) with a "lines"
// member: the sampled kernels, instructions and source texts, field by field.
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
#include "kscope/errors.hpp"
#include "kscope/lines.hpp"

namespace kscope {
namespace {

using namespace detail::json_fields;

// A field of an unsigned integer type other than std::size_t.
template <typename Row, typename Access>
Field<Row> count_field(std::string key, Access access) {
  return {std::move(key), [access](const Row& r) { return Written(static_cast<std::uint64_t>(access(r))); },
          [access](Row& r, const Read& j, const std::string& w) {
            using T = std::remove_reference_t<decltype(access(r))>;
            const std::uint64_t v = read_unsigned(j, w);
            if (v > std::numeric_limits<T>::max()) bad_value(w, "a smaller integer", j);
            access(r) = static_cast<T>(v);
          }};
}

template <typename Row, typename Access>
Field<Row> optional_count_field(std::string key, Access access) {
  return {std::move(key), [access](const Row& r) { return access(r) ? Written(*access(r)) : Written(); },
          [access](Row& r, const Read& j, const std::string& w) {
            access(r) = j.is_null() ? std::nullopt : std::optional<std::uint64_t>(read_unsigned(j, w));
          }};
}

const std::vector<Field<SourceLocation>>& location_fields() {
  static const std::vector<Field<SourceLocation>> fields{
      field<SourceLocation>("File", [](auto& l) -> auto& { return l.file; }),
      count_field<SourceLocation>("Line", [](auto& l) -> auto& { return l.line; }),
      field<SourceLocation>("Function", [](auto& l) -> auto& { return l.function; }),
  };
  return fields;
}

const std::vector<Field<SampledKernel>>& kernel_fields() {
  static const std::vector<Field<SampledKernel>> fields{
      field<SampledKernel>("Annotation", [](auto& k) -> auto& { return k.annotation; }),
      field<SampledKernel>("Config", [](auto& k) -> auto& { return k.config_index; }),
      field<SampledKernel>("Kernel", [](auto& k) -> auto& { return k.kernel; }),
      count_field<SampledKernel>("Samples", [](auto& k) -> auto& { return k.samples; }),
      count_field<SampledKernel>("Dropped", [](auto& k) -> auto& { return k.dropped; }),
      field<SampledKernel>("Launches", [](auto& k) -> auto& { return k.launches; }),
      count_field<SampledKernel>("PeriodLog2", [](auto& k) -> auto& { return k.period_log2; }),
      field<SampledKernel>("Note", [](auto& k) -> auto& { return k.note; }),
  };
  return fields;
}

const std::vector<Field<SampledInstruction>>& instruction_fields() {
  static const std::vector<Field<SampledInstruction>> fields{
      field<SampledInstruction>("Annotation", [](auto& i) -> auto& { return i.annotation; }),
      field<SampledInstruction>("Config", [](auto& i) -> auto& { return i.config_index; }),
      field<SampledInstruction>("Kernel", [](auto& i) -> auto& { return i.kernel; }),
      field<SampledInstruction>("Function", [](auto& i) -> auto& { return i.function; }),
      count_field<SampledInstruction>("PcOffset", [](auto& i) -> auto& { return i.pc_offset; }),
      field<SampledInstruction>("Sass", [](auto& i) -> auto& { return i.sass; }),
      {"Source",
       [](const SampledInstruction& i) {
         Written list = Written::array();
         for (const SourceLocation& l : i.source) list.push_back(write_object(l, location_fields()));
         return list;
       },
       [](SampledInstruction& i, const Read& j, const std::string& w) {
         if (!j.is_array()) bad_value(w, "a list of source locations", j);
         i.source.clear();
         for (const Read& l : j) read_object(l, i.source.emplace_back(), location_fields(), w);
       }},
      {"Stalls",  // [[reason, samples], ...] in the instruction's order
       [](const SampledInstruction& i) {
         Written list = Written::array();
         for (const auto& [reason, n] : i.stalls) list.push_back(Written::array({reason, n}));
         return list;
       },
       [](SampledInstruction& i, const Read& j, const std::string& w) {
         const char* expected = "a list of [stall reason, samples] pairs";
         if (!j.is_array()) bad_value(w, expected, j);
         i.stalls.clear();
         for (const Read& pair : j) {
           if (!pair.is_array() || pair.size() != 2 || !pair[0].is_string()) bad_value(w, expected, pair);
           i.stalls.emplace_back(pair[0].get<std::string>(), read_unsigned(pair[1], w));
         }
       }},
      optional_count_field<SampledInstruction>("Executed", [](auto& i) -> auto& { return i.executed; }),
      optional_count_field<SampledInstruction>("ThreadExecuted", [](auto& i) -> auto& { return i.thread_executed; }),
  };
  return fields;
}

template <typename Row>
Written write_list(const std::vector<Row>& rows, const std::vector<Field<Row>>& fields) {
  Written list = Written::array();
  for (const Row& r : rows) list.push_back(write_object(r, fields));
  return list;
}

std::string saved_by() { return detail::spell("LineResults::write_json", "LineResults.save"); }

LineResults lines_from(const nlohmann::json& section, Results sweep, const std::string& file) {
  const std::string where = file + ": \"lines\"";
  if (!section.is_object()) bad_value(where, "an object", section);
  SampledCode code;
  const std::size_t configs = sweep.configs().size();
  code.kernels = read_config_rows(section, "kernels", kernel_fields(), configs, where);
  code.instructions = read_config_rows(section, "instructions", instruction_fields(), configs, where);
  const auto sources = section.find("sources");
  if (sources == section.end() || !sources->is_object()) bad_value(where + " \"sources\"", "an object", section);
  for (const auto& [path, text] : sources->items()) {
    if (!text.is_string()) bad_value(where + " \"sources\" \"" + path + "\"", "a string", text);
    code.sources[path] = text.get<std::string>();
  }
  const auto notes = section.find("notes");
  if (notes == section.end()) throw ConfigError(where + " has no \"notes\"");
  decode(*notes, code.notes, where + " \"notes\"");
  const auto sass = section.find("sass_metrics");
  if (sass == section.end()) throw ConfigError(where + " has no \"sass_metrics\"");
  decode(*sass, code.sass_metrics, where + " \"sass_metrics\"");
  return LineResults(std::move(sweep), std::move(code));
}

}  // namespace

void LineResults::write_json(std::ostream& out) const {
  detail::write_results(sweep_, out, [&](std::ostream& o) {
    Written section;
    section["sass_metrics"] = code_.sass_metrics;
    section["notes"] = code_.notes;
    section["kernels"] = write_list(code_.kernels, kernel_fields());
    section["instructions"] = write_list(code_.instructions, instruction_fields());
    section["sources"] = Written::object();
    for (const auto& [path, text] : code_.sources) section["sources"][path] = text;
    std::string text = ",\n \"lines\": ";
    detail::append_json(text, section, 1);
    o << text;
  });
}

void LineResults::write_json(const std::string& path) const {
  detail::write_whole(path, [&](std::ostream& out) { write_json(out); });
}

LineResults load_line_results(const std::string& path) {
  std::istringstream in(detail::read_results_text(path, "a file written by " + saved_by()));
  return load_line_results(in, "'" + path + "'");
}

LineResults load_line_results(std::istream& in, const std::string& file) {
  const nlohmann::json doc = detail::read_results_document(in, file);
  const auto section = doc.find("lines");
  if (section == doc.end())
    throw ConfigError(file + " holds the results of a profile, not of line sampling: load it with " +
                      detail::spell("load_results", "kscope.load") + ", or give a file written by " + saved_by());
  return lines_from(*section, detail::results_from(doc, file), file);
}

}  // namespace kscope

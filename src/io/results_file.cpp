// kscope's results file: Results::write_json and load_results. A versioned JSON document whose
// fields are listed once, each with how it is written and read back, so that what is saved is
// exactly what loads: the session's here, the settings' in the settings table
// (core/model/settings_table.cpp), the rows' in the table columns (core/model/column_cells.cpp). A new column or
// saved setting is in the files from then on, and files without it load with it empty (or its
// default): no new format version.
#include <cstdint>
#include <functional>
#include <iterator>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <variant>
#include <vector>

#include "base/file_access.hpp"
#include "base/json_error.hpp"
#include "base/json_text.hpp"
#include "base/text.hpp"
#include "core/model/caller_language.hpp"
#include "core/model/cell_json.hpp"
#include "core/model/column_cells.hpp"
#include "core/model/json_fields.hpp"
#include "core/model/sample_store.hpp"
#include "core/model/sample_text.hpp"
#include "core/model/settings_table.hpp"
#include "io/json_columns.hpp"
#include "io/json_printer.hpp"
#include "io/results_file.hpp"
#include "kscope/backend_registry.hpp"
#include "kscope/errors.hpp"
#include "kscope/results.hpp"

namespace kscope {
namespace {

using namespace detail::json_fields;

constexpr const char* kFormat = "kscope-results";
constexpr int kVersion = 1;

std::string loaded_by() { return detail::spell("load_results", "kscope.load"); }

// An info collector's cell keeps its type (a non-finite real included, unlike a text cell).
Cell decode_cell(const Read& c, const std::string& where) {
  const auto cell = detail::cell_from_json(c);
  if (!cell) bad_value(where, "null, a number, a string, a boolean or {\"real\": \"NaN\"}", c);
  return *cell;
}

// A row's info cells as {column: cell}, in the order of "info_columns".
Written encode_info(const std::vector<Cell>& cells, const std::vector<std::string>& columns) {
  Written out = Written::object();
  for (std::size_t i = 0; i < cells.size() && i < columns.size(); ++i) out[columns[i]] = detail::cell_json(cells[i]);
  return out;
}

std::vector<Cell> decode_info(const Read& j, const std::vector<std::string>& columns, const std::string& where) {
  if (!j.is_object()) bad_value(where, "an object of the info collectors' cells", j);
  std::vector<Cell> cells;
  for (const auto& column : columns) {
    const auto found = j.find(column);
    if (found == j.end()) throw ConfigError(where + " has no \"" + column + "\" (a column of \"info_columns\")");
    cells.push_back(decode_cell(*found, where + " \"" + column + "\""));
  }
  return cells;
}

const std::vector<Field<SessionInfo>>& session_fields() {
  using S = SessionInfo;
  static const std::vector<Field<S>> fields{
      field<S>("backend", [](auto& s) -> auto& { return s.backend; }),
      field<S>("replay_passes", [](auto& s) -> auto& { return s.replay_passes; }),
      field<S>("cache_control", [](auto& s) -> auto& { return s.cache_control; }),
      field<S>("clock_control", [](auto& s) -> auto& { return s.clock_control; }),
      {"mode", [](const S& s) { return Written(s.mode()); }, {}},  // for readers: follows from the two above
      field<S>("locked_sm_clock_mhz", [](auto& s) -> auto& { return s.locked_sm_clock_mhz; }),
      field<S>("locked_memory_clock_mhz", [](auto& s) -> auto& { return s.locked_memory_clock_mhz; }),
      field<S>("thermal_pauses", [](auto& s) -> auto& { return s.thermal_pauses; }),
      field<S>("thermal_pause_s", [](auto& s) -> auto& { return s.thermal_pause_s; }),
      field<S>("gpu", [](auto& s) -> auto& { return s.gpu; }),
      field<S>("gpu_uuid", [](auto& s) -> auto& { return s.gpu_uuid; }),
      field<S>("driver_version", [](auto& s) -> auto& { return s.driver_version; }),
      field<S>("host", [](auto& s) -> auto& { return s.host; }),
      field<S>("rated_sm_clock_mhz", [](auto& s) -> auto& { return s.rated_sm_clock_mhz; }),
      field<S>("rated_memory_clock_mhz", [](auto& s) -> auto& { return s.rated_memory_clock_mhz; }),
      field<S>("report_path", [](auto& s) -> auto& { return s.report_path; }),
      added_later(field<S>("metrics", [](auto& s) -> auto& { return s.metrics; })),
      added_later(field<S>("idle_power_w", [](auto& s) -> auto& { return s.idle_power_w; })),
      added_later(field<S>("flush_energy_j", [](auto& s) -> auto& { return s.flush_energy_j; })),
      added_later(field<S>("energy_update_s", [](auto& s) -> auto& { return s.energy_update_s; })),
      added_later(field<S>("started_at", [](auto& s) -> auto& { return s.started_at; })),
      added_later(field<S>("load_avg", [](auto& s) -> auto& { return s.load_avg; })),
      added_later(field<S>("sm_count", [](auto& s) -> auto& { return s.sm_count; })),
      added_later(field<S>("compute_capability", [](auto& s) -> auto& { return s.compute_capability; })),
      added_later(field<S>("memory_bus_width_bits", [](auto& s) -> auto& { return s.memory_bus_width_bits; })),
  };
  return fields;
}

// The Settings fields the results file saves (core/model/settings_table.cpp lists them with the others).
const std::vector<Field<Settings>>& saved_settings_fields() {
  static const auto fields = [] {
    std::vector<Field<Settings>> saved;
    for (const auto& f : detail::settings_fields())
      if (f.saved) saved.push_back(f.json);
    return saved;
  }();
  return fields;
}

// ---- Rows ---------------------------------------------------------------------------------------
// Summary and sample rows name their config by its index in "configs"; their other keys are the
// table columns (core/model/column_cells.cpp, each cell in its column's type) without the session facts,
// which "session" holds once, plus Mean (the un-normalized mean behind a normalized AvgValue) and
// Info (the info collectors' cells by column, as "info_columns" lists them).

// The columns of the format's first files, which every file has; a file without another column (a
// later kscope's) loads with it empty.
bool in_first_files(const std::string& column) {
  static const std::set<std::string> columns{
      "Metric", "Unit", "AvgValue", "StdDev", "MinValue", "MaxValue", "Median", "Q1", "Q3", "IQR", "P20", "P80",
      "Outliers", "NumRuns", "CI95_Lower", "CI95_Upper", "RelativeStdDevPct", "StableMeasurement", "Normalized",
      "NormalizationValue", "Geomean", "Kernel", "ObservedSMClockMHz", "ObservedMemoryClockMHz", "ThrottledRuns",
      "Converged", "ThermalPauses", "Run", "Value", "SMClockMHz", "MemoryClockMHz", "Throttled"};
  return columns.count(column) > 0;
}

template <typename Row>
Field<Row> column_field(const detail::ColumnDefinition<Row>& column, bool added_later) {
  Field<Row> f = detail::json_fields::column_field<Row>(
      column.spec.name, column.spec.type, [&column](const Row& row) { return column.cell(row, SessionInfo{}); },
      column.read, column.expected);
  f.optional = added_later;
  f.part = column.part;
  return f;
}

// Annotation and Config, then `more` and the columns that are not session facts.
template <typename Row>
std::vector<Field<Row>> row_fields(const std::vector<detail::ColumnDefinition<Row>>& columns,
                                   std::vector<std::pair<std::string, Field<Row>>> after) {
  using P = detail::SamplePart;
  std::vector<Field<Row>> fields{
      field<Row>("Annotation", [](auto& r) -> auto& { return r.annotation; }),
      field<Row>("Config", [](auto& r) -> auto& { return r.config_index; }),
  };
  fields[0].part = P::label;
  fields[1].part = P::config;
  for (const auto& column : columns) {
    if (column.part == P::session) continue;
    fields.push_back(column_field(column, !in_first_files(column.spec.name)));
    for (auto& [previous, field] : after)
      if (previous == column.spec.name) fields.push_back(field);
  }
  return fields;
}

const std::vector<Field<SummaryRow>>& summary_fields() {
  return detail::remade_with_statistics([] {
    return row_fields(detail::summary_column_definitions(),
                      {{"AvgValue", field<SummaryRow>("Mean", [](auto& r) -> auto& { return r.stats.mean; })}});
  });
}

const std::vector<Field<SampleRow>>& sample_fields() {
  static const auto fields = row_fields(detail::sample_column_definitions(), {});
  return fields;
}

// ---- Configs ------------------------------------------------------------------------------------
// "axes": [{"name": "n", "type": "integer"}, ...] and "configs": [[1024, "f32"], ...], so that an
// integer axis stays integer and a double axis double, whatever the JSON reader does with 2.0.

Written encode_value(const Value& v) {
  switch (v.type()) {
    case ValueType::integer: return v.as_int();
    case ValueType::real: return encode(v.as_double());
    case ValueType::text: return v.as_string();
    case ValueType::boolean: return v.as_bool();
  }
  throw InternalError("a config value of no known type (kscope bug: please report it)");
}

Value decode_value(const Read& j, ValueType type, const std::string& where) {
  switch (type) {
    case ValueType::integer:
      if (!j.is_number_integer() || (j.is_number_unsigned() && j.get<std::uint64_t>() > INT64_MAX))
        bad_value(where, "an integer", j);
      return Value(static_cast<long long>(j.get<std::int64_t>()));
    case ValueType::real: {
      double v = 0;
      decode(j, v, where);
      return Value(v);
    }
    case ValueType::text: {
      std::string v;
      decode(j, v, where);
      return Value(std::move(v));
    }
    case ValueType::boolean: {
      bool v = false;
      decode(j, v, where);
      return Value(v);
    }
  }
  throw InternalError("a config axis of no known type (kscope bug: please report it)");
}

ValueType decode_type(const Read& j, const std::string& where) {
  for (ValueType t : {ValueType::integer, ValueType::real, ValueType::text, ValueType::boolean})
    if (j == std::string(to_string(t))) return t;
  bad_value(where, "\"integer\", \"double\", \"string\" or \"bool\"", j);
}

std::vector<Config> read_configs(const Read& doc, const std::string& file) {
  const Read& axes = doc.at("axes");
  const Read& configs = doc.at("configs");
  if (!axes.is_array()) bad_value(file + ": \"axes\"", "a list", axes);
  if (!configs.is_array()) bad_value(file + ": \"configs\"", "a list", configs);
  auto names = std::make_shared<std::vector<std::string>>();
  std::vector<ValueType> types;
  for (std::size_t a = 0; a < axes.size(); ++a) {
    const std::string where = file + ": axis " + std::to_string(a);
    if (!axes[a].is_object() || !axes[a].contains("name") || !axes[a].contains("type"))
      bad_value(where, "an object with \"name\" and \"type\"", axes[a]);
    std::string name;
    decode(axes[a]["name"], name, where + " \"name\"");
    names->push_back(std::move(name));
    types.push_back(decode_type(axes[a]["type"], where + " \"type\""));
  }
  std::vector<Config> out;
  for (std::size_t c = 0; c < configs.size(); ++c) {
    const std::string where = file + ": config " + std::to_string(c);
    if (!configs[c].is_array() || configs[c].size() != types.size())
      bad_value(where, ("a list of " + std::to_string(types.size()) + " values, one per axis").c_str(), configs[c]);
    std::vector<Value> values;
    for (std::size_t a = 0; a < types.size(); ++a)
      values.push_back(decode_value(configs[c][a], types[a], where + " \"" + (*names)[a] + "\""));
    out.emplace_back(names, std::move(values), c);
  }
  return out;
}

// Gives each row, checked, to `take`.
template <typename Row, typename Take>
void read_rows(const Read& doc, const char* key, const std::vector<Field<Row>>& fields, std::size_t config_count,
               const std::vector<std::string>& info_columns, const std::string& file, const Take& take) {
  const Read& array = doc.at(key);
  if (!array.is_array()) bad_value(file + ": \"" + key + "\"", "a list", array);
  for (std::size_t i = 0; i < array.size(); ++i) {
    const std::string where = file + ": " + key + " row " + std::to_string(i);
    Row row{};
    read_object(array[i], row, fields, where);
    if (row.config_index >= config_count)
      throw ConfigError(where + " \"Config\" is " + std::to_string(row.config_index) + ", but the file lists " +
                        std::to_string(config_count) + " configs");
    const auto info = array[i].find("Info");
    if (info == array[i].end()) throw ConfigError(where + " has no \"Info\"");
    row.info = decode_info(*info, info_columns, where + " \"Info\"");
    take(std::move(row));
  }
}

// Throws unless the document is kscope's results format in the version this kscope reads.
void check_format(const Read& doc, const std::string& file, const std::string& writer) {
  if (doc.is_object() && !doc.contains("format")) {
    if (doc.contains("benchmarks") && doc.contains("context"))
      throw ConfigError(file + " is Google Benchmark JSON: kscope writes that format for other tools, but loads "
                        "only its own results files (written by " + writer + ")");
    if (doc.contains("session") && doc.contains("summary"))
      throw ConfigError(file + " was written by a kscope from before results files had a format version; " +
                        loaded_by() + " cannot read it. Measure again with this kscope (its \"summary\" and "
                        "\"samples\" tables remain readable as plain JSON)");
  }
  if (!doc.is_object() || doc.value("format", Read()) != kFormat)
    throw ConfigError(file + " is not a kscope results file (it has no \"format\": \"" + kFormat +
                      "\"); give a file written by " + writer);
  const Read& version = doc.value("version", Read());
  const Read& written_by = doc.value("kscope_version", Read());
  const std::string version_of_writer = written_by.is_string() ? written_by.get<std::string>() : "an unknown version";
  if (!version.is_number_integer())
    throw ConfigError(file + ": \"version\" must be the format's version number, not " + version.dump());
  if (version.get<std::int64_t>() > kVersion)
    throw ConfigError(file + " is in kscope results format version " + version.dump() + " (written by kscope " +
                      version_of_writer + "); this kscope (" KSCOPE_VERSION ") reads version " + std::to_string(kVersion) +
                      ": update kscope to load it");
  if (version.get<std::int64_t>() != kVersion)
    throw ConfigError(file + " is in kscope results format version " + version.dump() + " (written by kscope " +
                      version_of_writer + "), which this kscope (" KSCOPE_VERSION ") cannot read: it reads version " +
                      std::to_string(kVersion));
}

// ---- Writing, piece by piece (io/json_printer.hpp) -------------------------------------------
// The document is written as dump(1) prints it whole, one piece at a time: the objects of its first
// and middle members, then each element of its long lists.

// The sample objects of "samples", made from the store.
detail::SampleText sample_objects(const std::vector<std::string>& info_columns) {
  std::vector<detail::SampleText::Column> columns;
  bool first = true;
  for (const auto& f : sample_fields()) {
    columns.push_back({f.part, [&f, first, key = detail::dumped_json(f.key)](const SampleRow& row, const SessionInfo&,
                                                                 std::string& out) {
                         detail::append_json_member(out, first, key, f.write(row), 2);
                       }});
    first = false;
  }
  columns.push_back({detail::SamplePart::info, [&info_columns](const SampleRow& row, const SessionInfo&, std::string& out) {
                       detail::append_json_member(out, false, "\"Info\"", encode_info(row.info, info_columns), 2);
                     }});
  return detail::SampleText(std::move(columns), "{", "\n  }");
}

}  // namespace

void Results::write_json(std::ostream& out) const { detail::write_results(*this, out, {}); }

namespace detail {

void write_results(const Results& results, std::ostream& out, const std::function<void(std::ostream&)>& more) {
  Written head;
  head["format"] = kFormat;
  head["version"] = kVersion;
  head["kscope_version"] = KSCOPE_VERSION;
  head["session"] = write_object(results.session(), session_fields());
  head["settings"] = write_object(results.settings(), saved_settings_fields());
  head["axes"] = Written::array();
  const std::vector<Config>& configs = results.configs();
  for (const auto& name : results.axis_names())
    head["axes"].push_back({{"name", name}, {"type", to_string(configs.front().at(name).type())}});
  out << "{" << detail::json_members(head);
  detail::write_json_list(out, "configs", configs.size(), [&](std::size_t c, std::string& text) {
    Written values = Written::array();
    for (const Value& v : configs[c].values()) values.push_back(encode_value(v));
    detail::append_json(text, values, 2);
  });
  const InfoColumns& info_columns = results.info_columns();
  Written middle;
  middle["info_columns"] = {{"summary", info_columns.summary}, {"samples", info_columns.samples}};
  middle["shard_sessions"] = Written::array();
  for (const auto& s : results.shard_sessions()) middle["shard_sessions"].push_back(write_object(s, session_fields()));
  out << "," << detail::json_members(middle);
  std::vector<std::string> keys;
  for (const auto& f : summary_fields()) keys.push_back(detail::dumped_json(f.key));
  const std::vector<SummaryRow>& rows = results.rows();
  detail::write_json_list(out, "summary", rows.size(), [&](std::size_t r, std::string& text) {
    text += "{";
    for (std::size_t k = 0; k < keys.size(); ++k) detail::append_json_member(text, k == 0, keys[k], summary_fields()[k].write(rows[r]), 2);
    detail::append_json_member(text, keys.empty(), "\"Info\"", encode_info(rows[r].info, info_columns.summary), 2);
    text += "\n  }";
  });
  detail::SampleText samples = sample_objects(info_columns.samples);
  const detail::SampleStore& store = results.samples().store();
  detail::write_json_list(out, "samples", results.samples().size(), [&](std::size_t i, std::string& text) {
    samples.append(store, i, results.session_of(store.config(i)), text);
  });
  if (more) more(out);
  out << "\n}\n";
}

}  // namespace detail

void Results::write_json(const std::string& path) const {
  detail::write_whole(path, [&](std::ostream& out) { write_json(out); });
}

Results load_results(const std::string& path) {
  const std::string file = "'" + path + "'";
  return detail::results_from(
      detail::parse_results_document(detail::read_results_text(path, "a file written by " + detail::results_writer()), file), file);
}

Results load_results(std::istream& in, const std::string& file) {
  return detail::results_from(detail::read_results_document(in, file), file);
}

namespace detail {

// The command line serves both languages: it names both.
std::string results_writer() {
  if (caller() == Caller::command_line) return "Results::write_json (C++) or ProfileResults.save (Python)";
  return spell("Results::write_json", "ProfileResults.save");
}

std::string read_results_text(const std::string& path, const std::string& expected) {
  InputFile in(path, expected);
  return read_whole(in, path, json_document_limit(), expected);
}

nlohmann::json read_results_document(std::istream& in, const std::string& file, const std::string& writer) {
  std::string text;
  try {
    text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  } catch (const std::ios_base::failure& e) {  // the file could be opened, not read
    throw FileError("cannot read " + file + ": " + e.code().message(), file, e.code());
  }
  return parse_results_document(text, file, writer);
}

nlohmann::json parse_results_document(const std::string& text, const std::string& file, const std::string& writer) {
  Read doc;
  try {
    doc = parse_json(text);
  } catch (const JsonTextError& e) {
    throw ConfigError(file + " is not JSON that kscope reads (" + e.what() + "); give a file written by " + writer);
  }
  check_format(doc, file, writer);
  return doc;
}

Results results_from(const nlohmann::json& doc, const std::string& file, const std::string& writer) {
  try {
    SessionInfo session;
    read_object(doc.at("session"), session, session_fields(), file + ": \"session\"");
    Settings settings;
    read_object(doc.at("settings"), settings, saved_settings_fields(), file + ": \"settings\"");
    std::vector<Config> configs = read_configs(doc, file);
    InfoColumns info;
    const Read& info_columns = doc.at("info_columns");
    if (!info_columns.is_object()) bad_value(file + ": \"info_columns\"", "an object", info_columns);
    decode(info_columns.at("summary"), info.summary, file + ": \"info_columns\" \"summary\"");
    decode(info_columns.at("samples"), info.samples, file + ": \"info_columns\" \"samples\"");
    std::vector<SummaryRow> rows;
    std::map<std::tuple<std::string, std::size_t, std::string>, std::size_t> row_of;  // one row per key
    read_rows(doc, "summary", summary_fields(), configs.size(), info.summary, file, [&](SummaryRow&& row) {
      const auto [earlier, first] = row_of.try_emplace({row.annotation, row.config_index, row.metric}, rows.size());
      if (!first)
        throw ConfigError(file + ": summary row " + std::to_string(rows.size()) + " repeats row " +
                          std::to_string(earlier->second) + " (annotation '" + detail::cut(row.annotation) +
                          "', config " + std::to_string(row.config_index) + ", metric '" + detail::cut(row.metric) +
                          "'): a results file has one row per annotation, config and metric, so this one was "
                          "edited or joined from two; give a file written by " + writer);
      rows.push_back(std::move(row));
    });
    // Straight into the store the Results share: no vector of every sample beside the document.
    auto store = std::make_shared<detail::SampleStore>();
    read_rows(doc, "samples", sample_fields(), configs.size(), info.samples, file,
              [&](const SampleRow& row) { store->append(row); });
    Samples samples(store, store->size());
    std::vector<SessionInfo> shard_sessions;
    const Read shards = doc.value("shard_sessions", Read::array());  // absent in files of unmerged results
    if (!shards.is_array()) bad_value(file + ": \"shard_sessions\"", "a list", shards);
    for (std::size_t i = 0; i < shards.size(); ++i)
      read_object(shards[i], shard_sessions.emplace_back(), session_fields(),
                  file + ": \"shard_sessions\" " + std::to_string(i));
    return Results(std::move(session), std::move(configs), std::move(rows), std::move(samples), std::move(info),
                   std::move(settings), std::move(shard_sessions));
  } catch (const Read::out_of_range& e) {  // doc.at(key) of a missing top-level key
    throw ConfigError(file + " is incomplete (" + detail::json_error_text(e) + "); give a file written by " +
                      writer);
  } catch (const Read::exception& e) {  // a value of a type no field check foresaw
    throw ConfigError(file + " is not a results file kscope can read (" + detail::printable(detail::json_error_text(e)) +
                      "); give a file written by " + writer);
  }
}

}  // namespace detail

}  // namespace kscope

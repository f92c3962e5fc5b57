#include "kscope/results.hpp"

#include <algorithm>
#include <cmath>
#include <ostream>

#include "base/csv.hpp"
#include "base/files.hpp"
#include "base/text.hpp"
#include "core/columns.hpp"
#include "core/sample_store.hpp"
#include "core/suggest.hpp"
#include "kscope/columns.hpp"
#include "kscope/errors.hpp"

namespace kscope {
namespace {

const std::vector<std::string> kNoAxes;

// Annotation and the config axes, then the schema's columns, then the info collectors'.
template <typename Row>
std::vector<std::string> table_columns(const std::vector<Config>& configs,
                                       const std::vector<detail::ColumnDefinition<Row>>& definitions,
                                       const std::vector<std::string>& info) {
  std::vector<std::string> columns{"Annotation"};
  for (const auto& a : configs.empty() ? kNoAxes : configs.front().names()) columns.push_back(a);
  for (const auto& d : definitions) columns.push_back(d.spec.name);
  columns.insert(columns.end(), info.begin(), info.end());
  return columns;
}

// Calls `take` with each row's cells, in the order of table_columns. `session_of`: the session
// facts of a config's rows.
template <typename Row, typename SessionOf, typename Take>
void for_each_row(const std::vector<Config>& configs, const SessionOf& session_of, const std::vector<Row>& rows,
                  const std::vector<detail::ColumnDefinition<Row>>& definitions, const Take& take) {
  std::vector<Cell> cells;
  for (const Row& row : rows) {
    cells.clear();
    cells.emplace_back(row.annotation);
    for (const auto& v : configs[row.config_index].values()) cells.push_back(detail::to_cell(v));
    const SessionInfo& session = session_of(row.config_index);
    for (const auto& d : definitions) cells.push_back(d.cell(row, session));
    cells.insert(cells.end(), row.info.begin(), row.info.end());
    take(cells);
  }
}

template <typename Row, typename SessionOf>
Table make_table(const std::vector<Config>& configs, const SessionOf& session_of, const std::vector<Row>& rows,
                 const std::vector<detail::ColumnDefinition<Row>>& definitions, const std::vector<std::string>& info) {
  Table t{table_columns(configs, definitions, info), {}};
  for_each_row(configs, session_of, rows, definitions, [&](const std::vector<Cell>& cells) { t.rows.push_back(cells); });
  return t;
}

// The samples as rows, built one by one from the store.
std::vector<SampleRow> rows_of(const Samples& samples) { return {samples.begin(), samples.end()}; }

}  // namespace

namespace detail {

Table samples_table(const Samples& rows, const std::vector<Config>& configs, const SessionInfo& session,
                    const std::vector<std::string>& info_columns) {
  return make_table(
      configs, [&](std::size_t) -> const SessionInfo& { return session; }, rows_of(rows), sample_column_definitions(),
      info_columns);
}

SampleText samples_csv_text(const std::vector<Config>& configs, std::size_t info_columns) {
  const auto& definitions = sample_column_definitions();
  const std::size_t axes = configs.empty() ? 0 : configs.front().names().size();
  const bool alone = 1 + axes + definitions.size() + info_columns == 1;
  std::vector<SampleText::Column> columns;
  columns.push_back({SamplePart::label, [alone](const SampleRow& row, const SessionInfo&, std::string& out) {
                       append_csv_field(out, Cell{row.annotation}, alone);
                     }});
  for (std::size_t a = 0; a < axes; ++a)
    columns.push_back({SamplePart::config, [&configs, a](const SampleRow& row, const SessionInfo&, std::string& out) {
                         out += ',';
                         append_csv_field(out, to_cell(configs[row.config_index].values()[a]), false);
                       }});
  for (const auto& d : definitions)
    columns.push_back({d.part, [&d](const SampleRow& row, const SessionInfo& session, std::string& out) {
                         out += ',';
                         append_csv_field(out, d.cell(row, session), false);
                       }});
  for (std::size_t c = 0; c < info_columns; ++c)
    columns.push_back({SamplePart::info, [c](const SampleRow& row, const SessionInfo&, std::string& out) {
                         out += ',';
                         append_csv_field(out, c < row.info.size() ? row.info[c] : Cell{}, false);
                       }});
  return SampleText(std::move(columns), "", "\n");
}

void check_info_cells(const Samples& samples, std::size_t table_columns, std::size_t info_columns) {
  const SampleStore& store = samples.store();
  for (std::size_t i = 0; i < samples.size(); ++i)
    if (const std::size_t cells = store.info(store.info_of(i)).size(); cells != info_columns)
      check_row_shape(i, table_columns - info_columns + cells, table_columns);
}

}  // namespace detail

Results::Results(SessionInfo session, std::vector<Config> configs, std::vector<SummaryRow> rows,
                 Samples samples, InfoColumns info_columns, Settings settings,
                 std::vector<SessionInfo> shard_sessions)
    : session_(std::move(session)), configs_(std::move(configs)), rows_(std::move(rows)),
      samples_(std::move(samples)), info_columns_(std::move(info_columns)), settings_(std::move(settings)),
      shard_sessions_(std::move(shard_sessions)) {
  settings_.derive_metric = nullptr;
  settings_.combine_kernel_metrics = nullptr;
  settings_.progress_observer = nullptr;
  settings_.work = {};
  for (auto& c : settings_.info_collectors) c.collect = nullptr;  // name and scope still say how it was summarized
}

const SessionInfo& Results::session_of(std::size_t config_index) const {
  return shard_sessions_.empty() ? session_ : shard_sessions_[config_index % shard_sessions_.size()];
}

const std::vector<std::string>& Results::axis_names() const {
  return configs_.empty() ? kNoAxes : configs_.front().names();
}

const SummaryRow& Results::at(const std::string& annotation, const std::string& metric,
                              std::size_t config_index) const {
  for (const auto& r : rows_)
    if (r.annotation == annotation && r.metric == metric && r.config_index == config_index) return r;
  throw Error("no result for annotation '" + annotation + "', metric '" + metric + "', config " +
              std::to_string(config_index));
}

Table Results::summary_table() const {
  return make_table(
      configs_, [this](std::size_t c) -> const SessionInfo& { return session_of(c); }, rows_,
      detail::summary_column_definitions(), info_columns_.summary);
}

Table Results::samples_table() const {
  return make_table(
      configs_, [this](std::size_t c) -> const SessionInfo& { return session_of(c); }, rows_of(samples_),
      detail::sample_column_definitions(), info_columns_.samples);
}

void Results::write_csv(const std::string& path) const {
  const auto& definitions = detail::summary_column_definitions();
  const Table header{table_columns(configs_, definitions, info_columns_.summary), {}};
  detail::write_whole(path, [&](std::ostream& out) {
    kscope::write_csv(header, out);
    std::size_t r = 0;
    for_each_row(
        configs_, [this](std::size_t c) -> const SessionInfo& { return session_of(c); }, rows_, definitions,
        [&](const std::vector<Cell>& cells) {
          detail::check_row_shape(r++, cells.size(), header.columns.size());
          detail::write_csv_row(cells, out);
        });
  });
}

void Results::write_samples_csv(const std::string& path) const {
  const Table header{table_columns(configs_, detail::sample_column_definitions(), info_columns_.samples), {}};
  detail::check_info_cells(samples_, header.columns.size(), info_columns_.samples.size());
  detail::write_whole(path, [&](std::ostream& out) {
    kscope::write_csv(header, out);
    if (header.columns.empty()) return;
    detail::SampleText text = detail::samples_csv_text(configs_, info_columns_.samples.size());
    std::string buffer;
    for (std::size_t i = 0; i < samples_.size(); ++i) {
      text.append(samples_.store(), i, session_of(samples_.store().config(i)), buffer);
      if (buffer.size() >= detail::kWriteChunk) {
        out << buffer;
        buffer.clear();
      }
    }
    out << buffer;
  });
}

void Results::write_all(const std::string& prefix) const {
  write_csv(prefix + "summary.csv");
  write_samples_csv(prefix + "samples.csv");
  write_json(prefix + "results.json");
}

std::ostream& operator<<(std::ostream& out, const Results& results) {
  const SessionInfo& s = results.session();
  out << "kscope: " << s.gpu << " | backend " << to_string(s.backend) << " | mode " << s.mode() << " (cache_control "
      << to_string(s.cache_control) << ", clock_control " << to_string(s.clock_control) << ") | rated SM " << s.rated_sm_clock_mhz
      << " MHz, memory " << s.rated_memory_clock_mhz << " MHz";
  if (!std::isnan(s.locked_sm_clock_mhz)) out << " | locked SM " << s.locked_sm_clock_mhz << " MHz";
  if (s.replay_passes > 1) out << " | " << s.replay_passes << " replay passes per run";
  if (!std::isnan(s.idle_power_w)) out << " | idle power " << s.idle_power_w << " W";
  if (s.thermal_pauses) out << " | " << s.thermal_pauses << " thermal pauses (" << s.thermal_pause_s << " s)";
  if (!s.report_path.empty()) out << " | report " << s.report_path;
  std::vector<FlopKind> kinds;
  bool work = false;
  for (const auto& r : results.rows()) {
    if (!r.work) continue;
    work = true;
    if (r.work->flops > 0 && std::find(kinds.begin(), kinds.end(), r.work->kind) == kinds.end())
      kinds.push_back(r.work->kind);
  }
  if (work) {
    const Roofs rated = session_roofs(s);
    out << " | roofs at rated clocks: DRAM " << detail::fixed(rated.dram_bytes_per_s / 1e9, 0) << " GB/s";
    for (const FlopKind& k : kinds)
      out << ", " << to_string(k) << " " << detail::fixed(rated.flops_per_s(k) / 1e12, 1) << " TFLOP/s";
  }
  out << "\n";
  // The console view keeps the columns a person reads first; CSV/JSON carry all of them.
  const Table full = results.summary_table();
  std::vector<std::string> shown{"Annotation"};
  for (const auto& a : results.axis_names()) shown.push_back(a);
  std::vector<std::string> labels = shown;
  for (const auto& [column, label] : console_columns()) {
    shown.push_back(column);
    labels.push_back(label);
  }
  if (work) {
    for (const auto& [column, label] : roofline_console_columns()) {
      shown.push_back(column);
      labels.push_back(label);
    }
  }
  for (const auto& column : results.info_columns().summary) {
    shown.push_back(column);
    labels.push_back(column);
  }
  Table view;
  view.columns = labels;
  std::vector<std::size_t> picked;
  for (const auto& c : shown) picked.push_back(full.column(c));
  for (const auto& row : full.rows) {
    std::vector<Cell> cells;
    for (std::size_t i : picked) cells.push_back(row[i]);
    view.rows.push_back(std::move(cells));
  }
  write_console(view, out);
  return out;
}

}  // namespace kscope

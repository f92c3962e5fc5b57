// Results: the data of a sweep (summary rows, samples, configs, session facts) and its tables.
// Its output formats are written in io/ (io/results_writers.hpp).
#include "kscope/results.hpp"

#include "base/csv.hpp"
#include "base/text.hpp"
#include "core/model/column_cells.hpp"
#include "core/model/result_tables.hpp"
#include "core/model/sample_store.hpp"
#include "kscope/columns.hpp"
#include "kscope/errors.hpp"

namespace kscope {
namespace {

const std::vector<std::string> kNoAxes;

template <typename Row, typename Rows, typename SessionOf>
Table make_table(const std::vector<Config>& configs, const SessionOf& session_of, const Rows& rows,
                 const std::vector<detail::ColumnDefinition<Row>>& definitions, const std::vector<std::string>& info) {
  Table t{detail::table_columns(configs, definitions, info), {}};
  detail::for_each_row(configs, session_of, rows, definitions,
                       [&](const std::vector<Cell>& cells) { t.rows.push_back(cells); });
  return t;
}

}  // namespace

namespace detail {

std::vector<std::string> samples_header(const std::vector<Config>& configs, const std::vector<std::string>& info_columns) {
  return table_columns(configs, sample_column_definitions(), info_columns);
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
      configs_, [this](std::size_t c) -> const SessionInfo& { return session_of(c); }, samples_,
      detail::sample_column_definitions(), info_columns_.samples);
}

}  // namespace kscope

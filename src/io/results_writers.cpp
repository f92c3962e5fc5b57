// The table of Results' output formats (core/files/output_formats.hpp), and the two CSV formats (the
// summary, the raw samples), written row by row from the schema's columns without building the table.
#include <cstring>
#include <ostream>

#include "base/csv.hpp"
#include "base/file_access.hpp"
#include "base/text.hpp"
#include "core/files/output_formats.hpp"
#include "core/model/registry.hpp"
#include "core/model/result_tables.hpp"
#include "kscope/errors.hpp"

namespace kscope {
namespace detail {

namespace {

Registry<OutputFormat, &OutputFormat::format>& registry() {
  static Registry<OutputFormat, &OutputFormat::format> formats("format", "register_output_format()", {
      {"summary CSV", "summary.csv", [](const Results& r, const std::string& path) { r.write_csv(path); }},
      {"samples CSV", kSamplesFile, [](const Results& r, const std::string& path) { r.write_samples_csv(path); }},
      {"kscope results file (JSON)", kResultsFile,
       [](const Results& r, const std::string& path) { r.write_json(path); }},
      {"Google Benchmark JSON", nullptr, [](const Results& r, const std::string& path) { r.write_gbench_json(path); }},
  });
  return formats;
}

}  // namespace

std::vector<OutputFormat> output_formats() { return registry().entries(); }

void register_output_format(OutputFormat format) {
  if (!format.format || !*format.format || !format.write)
    throw ConfigError("register_output_format(): the format needs a name and a writer");
  registry().add(format, [](const std::deque<OutputFormat>& formats, const OutputFormat& added) {
    for (const OutputFormat& f : formats)
      if (added.prefix_file && f.prefix_file && std::strcmp(f.prefix_file, added.prefix_file) == 0)
        throw ConfigError("register_output_format(): the prefix file '" + std::string(added.prefix_file) +
                          "' is format '" + f.format + "''s");
  });
}

}  // namespace detail

void Results::write_csv(const std::string& path) const {
  const auto& definitions = detail::summary_column_definitions();
  const Table header{detail::table_columns(configs_, definitions, info_columns_.summary), {}};
  detail::write_whole(path, [&](std::ostream& out) {
    kscope::write_csv(header, out);
    std::size_t r = 0;
    detail::for_each_row(
        configs_, [this](std::size_t c) -> const SessionInfo& { return session_of(c); }, rows_, definitions,
        [&](const std::vector<Cell>& cells) {
          detail::check_row_shape(r++, cells.size(), header.columns.size());
          detail::write_csv_row(cells, out);
        });
  });
}

void Results::write_samples_csv(const std::string& path) const {
  const Table header{detail::table_columns(configs_, detail::sample_column_definitions(), info_columns_.samples), {}};
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

}  // namespace kscope

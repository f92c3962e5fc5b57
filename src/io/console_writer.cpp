#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ostream>
#include <string>
#include <vector>

#include "base/text.hpp"
#include "core/model/suggest.hpp"
#include "kscope/columns.hpp"
#include "kscope/detail/session_headline.hpp"
#include "kscope/results.hpp"
#include "kscope/roofline.hpp"
#include "kscope/table.hpp"

namespace kscope {
namespace {

constexpr std::size_t max_text_width = 48;
constexpr const char* column_gap = "  ";
constexpr const char* missing = "-";

// Four significant digits; whole numbers below a million stay in plain digits (15235, not
// 1.524e+04) because durations in ns are the most common values.
std::string format_double(double value) {
  if (std::isnan(value)) return missing;
  char buffer[32];
  const double magnitude = std::abs(value);
  const char* format = magnitude >= 1e4 && magnitude < 1e6 ? "%.0f" : "%.4g";
  std::snprintf(buffer, sizeof buffer, format, value);
  return buffer;
}

// Control characters would break the alignment of every line after them.
std::string printable_text(std::string text) {
  std::replace_if(
      text.begin(), text.end(), [](char ch) { return static_cast<unsigned char>(ch) < 0x20; },
      ' ');
  return detail::truncate_to_width(text, max_text_width);
}

std::string cell_text(const Cell& cell) {
  return std::visit(
      detail::Overloaded{
          [](std::monostate) { return std::string(missing); },
          [](std::int64_t value) { return std::to_string(value); },
          [](double value) { return format_double(value); },
          [](const std::string& value) { return printable_text(value); },
          [](bool value) { return std::string(value ? "yes" : "no"); },
      },
      cell);
}

bool is_number(const Cell& cell) {
  return std::holds_alternative<std::int64_t>(cell) || std::holds_alternative<double>(cell);
}

// A column is right-aligned when it holds numbers and nothing else but missing cells.
bool is_numeric_column(const Table& table, std::size_t column) {
  bool any_number = false;
  for (const auto& row : table.rows) {
    const Cell& cell = row[column];
    if (std::holds_alternative<std::monostate>(cell)) continue;
    if (!is_number(cell)) return false;
    any_number = true;
  }
  return any_number;
}

struct ColumnLayout {
  std::size_t width = 0;
  bool right_aligned = false;
};

void append_padded(std::string& line, const std::string& text, const ColumnLayout& layout) {
  const std::string padding(layout.width - detail::display_width(text), ' ');
  line += layout.right_aligned ? padding + text : text + padding;
}

void write_line(std::ostream& out, const std::vector<std::string>& texts,
                const std::vector<ColumnLayout>& layouts) {
  std::string line;
  for (std::size_t i = 0; i < texts.size(); ++i) {
    if (i > 0) line += column_gap;
    append_padded(line, texts[i], layouts[i]);
  }
  line.erase(line.find_last_not_of(' ') + 1);  // left-aligned last columns leave trailing blanks
  out << line << '\n';
}

}  // namespace

void write_console(const Table& table, std::ostream& out) {
  detail::check_table_shape(table);
  if (table.columns.empty()) return;

  std::vector<std::string> header;
  std::vector<std::vector<std::string>> body(table.rows.size());
  std::vector<ColumnLayout> layouts(table.columns.size());
  for (std::size_t c = 0; c < table.columns.size(); ++c) {
    header.push_back(printable_text(table.columns[c]));
    layouts[c].right_aligned = is_numeric_column(table, c);
    layouts[c].width = detail::display_width(header[c]);
    for (std::size_t r = 0; r < table.rows.size(); ++r) {
      body[r].push_back(cell_text(table.rows[r][c]));
      layouts[c].width = std::max(layouts[c].width, detail::display_width(body[r][c]));
    }
  }

  std::vector<std::string> rule;
  for (const auto& layout : layouts) rule.emplace_back(layout.width, '-');
  write_line(out, header, layouts);
  write_line(out, rule, layouts);
  for (const auto& texts : body) write_line(out, texts, layouts);
}

// Results on the console: the session in one line, then the summary columns a person reads first
// (CSV and JSON carry all of them).
std::ostream& operator<<(std::ostream& out, const Results& results) {
  const SessionInfo& s = results.session();
  out << "kscope: " << detail::session_headline(s) << " | rated SM " << s.rated_sm_clock_mhz << " MHz, memory "
      << s.rated_memory_clock_mhz << " MHz";
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

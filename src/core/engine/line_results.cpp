// LineResults: the sampled instructions folded into one row per source line and stall reason, the
// raw and per-kernel tables, the terminal listing, and the comparison of two results.
#include <algorithm>
#include <cmath>
#include <iomanip>
#include <map>
#include <ostream>
#include <set>
#include <sstream>
#include <tuple>

#include "base/text.hpp"
#include "core/model/derived_columns.hpp"
#include "core/model/line_rows.hpp"
#include "kscope/detail/config_cells.hpp"
#include "kscope/detail/session_headline.hpp"
#include "kscope/lines.hpp"

namespace kscope {
namespace detail {
namespace {

std::string base_name(const std::string& path) {
  const auto slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string hex(std::uint64_t v) {
  std::ostringstream out;
  out << "0x" << std::hex << v;
  return out.str();
}

// The lines of each source file, split once.
class SourceLines {
 public:
  explicit SourceLines(const std::map<std::string, std::string>& sources) : sources_(sources) {}
  std::string at(const std::string& file, std::uint32_t line) {
    if (line == 0) return {};
    auto found = split_.find(file);
    if (found == split_.end()) {
      std::vector<std::string> lines;
      if (const auto text = sources_.find(file); text != sources_.end()) {
        std::istringstream in(text->second);
        for (std::string l; std::getline(in, l);) lines.push_back(l);
      }
      found = split_.emplace(file, std::move(lines)).first;
    }
    return line <= found->second.size() ? found->second[line - 1] : std::string();
  }

 private:
  const std::map<std::string, std::string>& sources_;
  std::map<std::string, std::vector<std::string>> split_;
};

using KernelKey = std::tuple<std::string, std::size_t, std::string>;  // annotation, config, kernel
using LineKey = std::tuple<std::string, std::size_t, std::string, std::string, std::uint32_t, std::string, std::uint64_t>;

}  // namespace

std::string frame_text(const SourceLocation& frame) {
  const std::string at = base_name(frame.file) + ":" + std::to_string(frame.line);
  return frame.function.empty() ? at : frame.function + " (" + at + ")";  // Triton's helpers have no function name
}

std::string inlined_from_text(const std::vector<SourceLocation>& source) {
  // From the call site in the function's own code inwards: "outer (k.cu:5) > inner (k.cu:2)".
  std::string out;
  for (std::size_t i = source.size() > 0 ? source.size() - 1 : 0; i-- > 0;)
    out += (out.empty() ? "" : " > ") + frame_text(source[i]);
  return out;
}

std::vector<SourceLine> source_lines(const SampledCode& code) {
  std::map<LineKey, SourceLine> lines;
  std::map<KernelKey, std::uint64_t> kernel_samples;
  for (const SampledInstruction& in : code.instructions) {
    std::uint64_t samples = 0;
    for (const auto& [reason, n] : in.stalls) samples += n;
    kernel_samples[{in.annotation, in.config_index, in.kernel}] += samples;
    const bool has_line = !in.source.empty();
    // Attributed to the line in the function's own code; code without line information to its offset.
    const SourceLocation at = has_line ? in.source.back() : SourceLocation{"", 0, in.function};
    const LineKey key{in.annotation, in.config_index, in.kernel, at.file, at.line, at.function,
                      has_line ? 0 : in.pc_offset};
    auto [it, added] = lines.try_emplace(key);
    SourceLine& line = it->second;
    if (added) {
      line.annotation = in.annotation;
      line.config_index = in.config_index;
      line.kernel = in.kernel;
      line.at = at;
      if (!has_line) line.pc_offset = in.pc_offset;
    }
    for (const auto& [reason, n] : in.stalls) {
      auto s = std::find_if(line.stalls.begin(), line.stalls.end(), [&](const auto& x) { return x.first == reason; });
      if (s == line.stalls.end()) line.stalls.emplace_back(reason, n);
      else s->second += n;
    }
    line.samples += samples;
    if (in.executed) line.executed = line.executed.value_or(0) + *in.executed;
    if (in.thread_executed) line.thread_executed = line.thread_executed.value_or(0) + *in.thread_executed;
    if (const std::string chain = inlined_from_text(in.source); !chain.empty()) line.inlined_from.insert(chain);
  }
  std::vector<SourceLine> out;
  for (auto& [key, line] : lines) {
    if (line.samples == 0) continue;  // counted by the SASS metrics, never sampled: no row to show
    line.kernel_samples = kernel_samples[{line.annotation, line.config_index, line.kernel}];
    std::sort(line.stalls.begin(), line.stalls.end(),
              [](const auto& a, const auto& b) { return std::tie(b.second, a.first) < std::tie(a.second, b.first); });
    out.push_back(std::move(line));
  }
  // Each kernel's lines, most sampled first.
  std::stable_sort(out.begin(), out.end(), [](const SourceLine& a, const SourceLine& b) {
    return std::tie(a.annotation, a.config_index, a.kernel, b.samples) <
           std::tie(b.annotation, b.config_index, b.kernel, a.samples);
  });
  return out;
}

double share_pct(std::uint64_t part, std::uint64_t whole) {
  return whole == 0 ? NAN : 100.0 * static_cast<double>(part) / static_cast<double>(whole);
}

std::optional<double> thread_efficiency_pct(const SourceLine& line) {
  if (!line.executed || !line.thread_executed || *line.executed == 0) return std::nullopt;
  return 100.0 * static_cast<double>(*line.thread_executed) / (32.0 * static_cast<double>(*line.executed));
}

std::string location_text(const SourceLine& line) {
  if (line.at.line == 0) return line.at.function + "+" + hex(line.pc_offset);
  return base_name(line.at.file) + ":" + std::to_string(line.at.line);
}

}  // namespace detail

namespace {

using detail::DerivedColumns;
using detail::SourceLine;
using T = ColumnType;

// The config values of a row's config (none for an index the sweep lacks).
std::vector<Value> config_values(const Results& sweep, std::size_t config) {
  return config < sweep.configs().size() ? sweep.configs()[config].values() : std::vector<Value>{};
}

Cell count(std::uint64_t v) { return Cell(static_cast<std::int64_t>(v)); }
Cell optional_cell(const std::optional<std::uint64_t>& v) { return v ? count(*v) : Cell(); }
Cell optional_cell(const std::optional<double>& v) { return v ? Cell(*v) : Cell(); }
Cell line_cell(std::uint32_t line) { return line ? count(line) : Cell(); }  // empty without line information

std::string joined(const std::set<std::string>& texts) {
  std::string out;
  for (const auto& t : texts) out += (out.empty() ? "" : "; ") + t;
  return out;
}

// Annotation, Kernel, File and Line, which say what source line a row is of (its `line`), then `more`.
template <typename Row>
std::vector<detail::DerivedColumn<LineResults, Row>> source_line_columns(
    std::vector<detail::DerivedColumn<LineResults, Row>> more) {
  using L = LineResults;
  std::vector<detail::DerivedColumn<L, Row>> columns{
      {"Annotation", T::text, [](const L&, const Row& r) { return Cell{r.line->annotation}; }},
      {"Kernel", T::text, [](const L&, const Row& r) { return Cell{r.line->kernel}; }},
      {"File", T::text, [](const L&, const Row& r) { return Cell{r.line->at.file}; }},
      {"Line", T::optional_integer, [](const L&, const Row& r) { return line_cell(r.line->at.line); }},
  };
  columns.insert(columns.end(), more.begin(), more.end());
  return columns;
}

// A row of the lines table: one stall reason of a source line, with the line's text.
struct LineRow {
  const SourceLine* line;
  const std::pair<std::string, std::uint64_t>* stall;
  std::string text;
  std::string inlined;
};

const DerivedColumns<LineResults, LineRow>& lines_columns() {
  using R = LineRow;
  using L = LineResults;
  static const DerivedColumns<L, R> table{
      source_line_columns<R>({
          {"Function", T::text, [](const L&, const R& r) { return Cell{r.line->at.function}; }},
          {"StallReason", T::text, [](const L&, const R& r) { return Cell{r.stall->first}; }},
          {"Samples", T::integer, [](const L&, const R& r) { return count(r.stall->second); }},
          {"SharePct", T::real,
           [](const L&, const R& r) { return Cell{detail::share_pct(r.stall->second, r.line->kernel_samples)}; }},
          {"LineSamples", T::integer, [](const L&, const R& r) { return count(r.line->samples); }},
          {"LineSharePct", T::real,
           [](const L&, const R& r) { return Cell{detail::share_pct(r.line->samples, r.line->kernel_samples)}; }},
          {"LineText", T::text, [](const L&, const R& r) { return Cell{r.text}; }},
          {"InlinedFrom", T::text, [](const L&, const R& r) { return Cell{r.inlined}; }},
          {"PcOffset", T::optional_integer,  // code without line information: where it is instead
           [](const L&, const R& r) { return r.line->at.line ? Cell() : count(r.line->pc_offset); }},
          {"InstExecuted", T::optional_integer, [](const L&, const R& r) { return optional_cell(r.line->executed); }},
          {"ThreadEfficiencyPct", T::real,
           [](const L&, const R& r) { return optional_cell(detail::thread_efficiency_pct(*r.line)); }},
      }),
      1,
      [](const L& l, const R& r) { return config_values(l.sweep(), r.line->config_index); }};
  return table;
}

// A row of the instructions table: one stall reason of an instruction (none: executed, never sampled).
struct InstructionRow {
  const SampledInstruction* in;
  std::string reason;
  std::uint64_t samples;
  std::string inlined_at;  // the call sites outwards from the innermost frame, where its code was written
};

const DerivedColumns<LineResults, InstructionRow>& instructions_columns() {
  using R = InstructionRow;
  using L = LineResults;
  static const DerivedColumns<L, R> table{
      {
          {"Annotation", T::text, [](const L&, const R& r) { return Cell{r.in->annotation}; }},
          {"Kernel", T::text, [](const L&, const R& r) { return Cell{r.in->kernel}; }},
          {"Function", T::text, [](const L&, const R& r) { return Cell{r.in->function}; }},
          {"PcOffset", T::integer, [](const L&, const R& r) { return count(r.in->pc_offset); }},
          {"Sass", T::text, [](const L&, const R& r) { return Cell{r.in->sass}; }},
          {"File", T::text,
           [](const L&, const R& r) { return Cell{r.in->source.empty() ? std::string() : r.in->source.front().file}; }},
          {"Line", T::optional_integer,
           [](const L&, const R& r) { return r.in->source.empty() ? Cell() : line_cell(r.in->source.front().line); }},
          {"InlinedAt", T::text, [](const L&, const R& r) { return Cell{r.inlined_at}; }},
          {"StallReason", T::text, [](const L&, const R& r) { return Cell{r.reason}; }},
          {"Samples", T::integer, [](const L&, const R& r) { return count(r.samples); }},
          {"InstExecuted", T::optional_integer, [](const L&, const R& r) { return optional_cell(r.in->executed); }},
          {"ThreadInstExecuted", T::optional_integer,
           [](const L&, const R& r) { return optional_cell(r.in->thread_executed); }},
      },
      1,
      [](const L& l, const R& r) { return config_values(l.sweep(), r.in->config_index); }};
  return table;
}

const DerivedColumns<LineResults, SampledKernel>& kernels_columns() {
  using K = SampledKernel;
  using L = LineResults;
  static const DerivedColumns<L, K> table{
      {
          {"Annotation", T::text, [](const L&, const K& k) { return Cell{k.annotation}; }},
          {"Kernel", T::text, [](const L&, const K& k) { return Cell{k.kernel}; }},
          {"Samples", T::integer, [](const L&, const K& k) { return count(k.samples); }},
          {"Dropped", T::integer, [](const L&, const K& k) { return count(k.dropped); }},
          {"Launches", T::integer, [](const L&, const K& k) { return count(k.launches); }},
          {"SamplingPeriodCycles", T::optional_integer,
           [](const L&, const K& k) { return k.period_log2 ? count(std::uint64_t{1} << k.period_log2) : Cell(); }},
          {"Note", T::text, [](const L&, const K& k) { return Cell{k.note}; }},
      },
      1,
      [](const L& l, const K& k) { return config_values(l.sweep(), k.config_index); }};
  return table;
}

// A row of the comparison of two results' lines: a line of either or both, its text and its
// dominant stall on each side (its config and text from `side`, the candidate's where it has it).
struct LineChange {
  const SourceLine* line;
  const LineResults* side;
  double baseline_share, share;
  std::string text, baseline_stall, stall;
};

const DerivedColumns<LineResults, LineChange>& comparison_columns() {
  using R = LineChange;
  using L = LineResults;
  static const DerivedColumns<L, R> table{
      source_line_columns<R>({
          {"LineText", T::text, [](const L&, const R& r) { return Cell{r.text}; }},
          {"BaselineSharePct", T::real, [](const L&, const R& r) { return Cell{r.baseline_share}; }},
          {"SharePct", T::real, [](const L&, const R& r) { return Cell{r.share}; }},
          {"DeltaPct", T::real, [](const L&, const R& r) { return Cell{r.share - r.baseline_share}; }},
          {"BaselineDominantStall", T::text, [](const L&, const R& r) { return Cell{r.baseline_stall}; }},
          {"DominantStall", T::text, [](const L&, const R& r) { return Cell{r.stall}; }},
      }),
      1,
      [](const L&, const R& r) { return config_values(r.side->sweep(), r.line->config_index); }};
  return table;
}

// The table of `rows`, and (`configs` given) each row's config index.
template <typename Row, typename ConfigOf>
Table table_of(const DerivedColumns<LineResults, Row>& columns, const LineResults& results, const std::vector<Row>& rows,
               std::vector<std::size_t>* configs, ConfigOf config_of) {
  if (configs)
    for (const Row& row : rows) configs->push_back(config_of(row));
  return columns.table(results, rows, results.sweep().axis_names());
}

}  // namespace

const std::vector<ColumnSpec>& line_columns() {
  static const std::vector<ColumnSpec> specs = lines_columns().specs();
  return specs;
}

const std::vector<ColumnSpec>& instruction_columns() {
  static const std::vector<ColumnSpec> specs = instructions_columns().specs();
  return specs;
}

const std::vector<ColumnSpec>& line_kernel_columns() {
  static const std::vector<ColumnSpec> specs = kernels_columns().specs();
  return specs;
}

const std::vector<ColumnSpec>& line_comparison_columns() {
  static const std::vector<ColumnSpec> specs = comparison_columns().specs();
  return specs;
}

LineResults::LineResults(Results sweep, SampledCode code) : sweep_(std::move(sweep)), code_(std::move(code)) {}

Table LineResults::lines_table(std::vector<std::size_t>* configs) const {
  detail::SourceLines texts(code_.sources);
  const std::vector<SourceLine> lines = detail::source_lines(code_);
  std::vector<LineRow> rows;
  for (const SourceLine& line : lines) {
    const std::string text = detail::printable(texts.at(line.at.file, line.at.line));
    const std::string inlined = joined(line.inlined_from);
    for (const auto& stall : line.stalls) rows.push_back({&line, &stall, text, inlined});
  }
  return table_of(lines_columns(), *this, rows, configs, [](const LineRow& r) { return r.line->config_index; });
}

Table LineResults::instructions_table(std::vector<std::size_t>* configs) const {
  std::vector<InstructionRow> rows;
  for (const SampledInstruction& in : code_.instructions) {
    std::string inlined_at;
    for (std::size_t i = 1; i < in.source.size(); ++i)
      inlined_at += (i == 1 ? "" : " < ") + detail::frame_text(in.source[i]);
    if (in.stalls.empty()) rows.push_back({&in, "", 0, inlined_at});  // executed but never sampled (SASS metrics only)
    for (const auto& [reason, samples] : in.stalls) rows.push_back({&in, reason, samples, inlined_at});
  }
  return table_of(instructions_columns(), *this, rows, configs, [](const InstructionRow& r) { return r.in->config_index; });
}

Table LineResults::kernels_table(std::vector<std::size_t>* configs) const {
  return table_of(kernels_columns(), *this, code_.kernels, configs, [](const SampledKernel& k) { return k.config_index; });
}

std::string LineResults::listing(std::size_t top) const {
  std::ostringstream out;
  const std::vector<SourceLine> lines = detail::source_lines(code_);
  detail::SourceLines texts(code_.sources);
  out << "kscope lines: " << detail::session_headline(sweep_.session());
  for (const auto& note : code_.notes) out << "\n  note: " << note;
  // Kernels that ran without a sample: named, with why, where their lines would be.
  for (const auto& k : code_.kernels)
    if (k.samples == 0) out << "\n\n" << k.annotation << "  " << k.kernel << "  (no samples)\n  note: " << k.note;
  std::size_t shown = 0;
  const SourceLine* previous = nullptr;
  for (const SourceLine& line : lines) {
    const bool new_kernel = !previous || line.annotation != previous->annotation ||
                            line.config_index != previous->config_index || line.kernel != previous->kernel;
    if (new_kernel) {
      out << "\n\n" << line.annotation;
      if (line.config_index < sweep_.configs().size() && !sweep_.axis_names().empty())
        out << " [" << sweep_.configs()[line.config_index].to_string() << "]";
      out << "  " << line.kernel << "  (" << line.kernel_samples << " samples)";
      for (const auto& k : code_.kernels)
        if (k.annotation == line.annotation && k.config_index == line.config_index && k.kernel == line.kernel &&
            !k.note.empty())
          out << "\n  note: " << k.note;
      out << "\n   share  line                      stall (share of the line)       source";
      shown = 0;
    }
    previous = &line;
    if (shown++ >= top) continue;
    const auto& [reason, samples] = line.stalls.front();
    std::ostringstream stall;
    stall << reason << " (" << std::fixed << std::setprecision(0) << detail::share_pct(samples, line.samples) << "%)";
    std::string text = line.at.line ? texts.at(line.at.file, line.at.line) : "(no line information)";
    text.erase(0, text.find_first_not_of(" \t"));
    std::string where = detail::location_text(line);
    if (where.size() > 24) where = where.substr(0, 11) + "..." + where.substr(where.size() - 10);  // its offset kept
    out << "\n  " << std::fixed << std::setprecision(1) << std::setw(5)
        << detail::share_pct(line.samples, line.kernel_samples) << "%  " << std::left << std::setw(24) << where << "  "
        << std::setw(30) << stall.str() << "  " << std::right << detail::printable(text.substr(0, 80));
  }
  return out.str();
}

std::ostream& operator<<(std::ostream& out, const LineResults& results) { return out << results.listing(); }

Table compare_lines(const LineResults& baseline, const LineResults& candidate) {
  using Key = std::tuple<std::string, std::string, std::string, std::string, std::uint32_t, std::string, std::uint64_t>;
  // Matched by the config's values, so that results of two sweeps over the same configs in another
  // order still match.
  auto key_of = [](const LineResults& r, const SourceLine& l) {
    const std::string config = l.config_index < r.sweep().configs().size() ? r.sweep().configs()[l.config_index].to_string() : "";
    return Key{l.annotation, config, l.kernel, l.at.file, l.at.line, l.at.function, l.pc_offset};
  };
  std::map<Key, std::pair<const SourceLine*, const SourceLine*>> matched;
  const std::vector<SourceLine> before = detail::source_lines(baseline.code());
  const std::vector<SourceLine> after = detail::source_lines(candidate.code());
  for (const auto& l : before) matched[key_of(baseline, l)].first = &l;
  for (const auto& l : after) matched[key_of(candidate, l)].second = &l;

  detail::SourceLines texts(candidate.code().sources), baseline_texts(baseline.code().sources);
  std::vector<LineChange> rows;
  for (const auto& [key, pair] : matched) {
    const auto [a, b] = pair;
    const SourceLine& any = b ? *b : *a;
    const std::string text = b ? texts.at(any.at.file, any.at.line) : baseline_texts.at(any.at.file, any.at.line);
    rows.push_back({&any, b ? &candidate : &baseline, a ? detail::share_pct(a->samples, a->kernel_samples) : 0.0,
                    b ? detail::share_pct(b->samples, b->kernel_samples) : 0.0, detail::printable(text),
                    a ? a->stalls.front().first : std::string(), b ? b->stalls.front().first : std::string()});
  }
  std::stable_sort(rows.begin(), rows.end(), [](const LineChange& x, const LineChange& y) {
    return std::abs(x.share - x.baseline_share) > std::abs(y.share - y.baseline_share);
  });
  return comparison_columns().table(candidate, rows, candidate.sweep().axis_names());
}

}  // namespace kscope

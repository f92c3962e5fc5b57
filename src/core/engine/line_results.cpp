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
#include "core/model/line_rows.hpp"
#include "kscope/detail/config_cells.hpp"
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

using detail::SourceLine;

// Annotation and the config axes, as every table of the results starts.
std::vector<std::string> head_columns(const Results& sweep) {
  std::vector<std::string> columns{"Annotation"};
  for (const auto& a : sweep.axis_names()) columns.push_back(a);
  return columns;
}

std::vector<Cell> head_cells(const Results& sweep, const std::string& annotation, std::size_t config) {
  std::vector<Cell> cells{annotation};
  if (config < sweep.configs().size())
    for (const auto& v : sweep.configs()[config].values()) cells.push_back(detail::to_cell(v));
  return cells;
}

Cell optional_cell(const std::optional<std::uint64_t>& v) {
  return v ? Cell(static_cast<std::int64_t>(*v)) : Cell();
}
Cell optional_cell(const std::optional<double>& v) { return v ? Cell(*v) : Cell(); }

std::string joined(const std::set<std::string>& texts) {
  std::string out;
  for (const auto& t : texts) out += (out.empty() ? "" : "; ") + t;
  return out;
}

}  // namespace

LineResults::LineResults(Results sweep, SampledCode code) : sweep_(std::move(sweep)), code_(std::move(code)) {}

Table LineResults::lines_table(std::vector<std::size_t>* configs) const {
  Table t{head_columns(sweep_), {}};
  for (const char* c : {"Kernel", "File", "Line", "Function", "StallReason", "Samples", "SharePct", "LineSamples",
                        "LineSharePct", "LineText", "InlinedFrom", "PcOffset", "InstExecuted", "ThreadEfficiencyPct"})
    t.columns.emplace_back(c);
  detail::SourceLines texts(code_.sources);
  for (const SourceLine& line : detail::source_lines(code_)) {
    const std::string text = detail::printable(texts.at(line.at.file, line.at.line));
    const std::string inlined = joined(line.inlined_from);
    for (const auto& [reason, samples] : line.stalls) {
      std::vector<Cell> row = head_cells(sweep_, line.annotation, line.config_index);
      row.insert(row.end(), {line.kernel, line.at.file,
                             line.at.line ? Cell(static_cast<std::int64_t>(line.at.line)) : Cell(), line.at.function,
                             reason, static_cast<std::int64_t>(samples), detail::share_pct(samples, line.kernel_samples),
                             static_cast<std::int64_t>(line.samples), detail::share_pct(line.samples, line.kernel_samples),
                             text, inlined, line.at.line ? Cell() : Cell(static_cast<std::int64_t>(line.pc_offset)),
                             optional_cell(line.executed), optional_cell(detail::thread_efficiency_pct(line))});
      t.rows.push_back(std::move(row));
      if (configs) configs->push_back(line.config_index);
    }
  }
  return t;
}

Table LineResults::instructions_table(std::vector<std::size_t>* configs) const {
  Table t{head_columns(sweep_), {}};
  for (const char* c : {"Kernel", "Function", "PcOffset", "Sass", "File", "Line", "InlinedAt", "StallReason",
                        "Samples", "InstExecuted", "ThreadInstExecuted"})
    t.columns.emplace_back(c);
  for (const SampledInstruction& in : code_.instructions) {
    const bool has_line = !in.source.empty();
    // The innermost frame: where the instruction's code was written; InlinedAt the call sites outwards.
    std::string inlined_at;
    for (std::size_t i = 1; i < in.source.size(); ++i)
      inlined_at += (i == 1 ? "" : " < ") + detail::frame_text(in.source[i]);
    auto add = [&](const std::string& reason, Cell samples) {
      std::vector<Cell> row = head_cells(sweep_, in.annotation, in.config_index);
      row.insert(row.end(), {in.kernel, in.function, static_cast<std::int64_t>(in.pc_offset), in.sass,
                             has_line ? in.source.front().file : std::string(),
                             has_line ? Cell(static_cast<std::int64_t>(in.source.front().line)) : Cell(), inlined_at,
                             reason, samples, optional_cell(in.executed), optional_cell(in.thread_executed)});
      t.rows.push_back(std::move(row));
      if (configs) configs->push_back(in.config_index);
    };
    if (in.stalls.empty()) add("", Cell(std::int64_t{0}));  // executed but never sampled (SASS metrics only)
    for (const auto& [reason, samples] : in.stalls) add(reason, static_cast<std::int64_t>(samples));
  }
  return t;
}

Table LineResults::kernels_table(std::vector<std::size_t>* configs) const {
  Table t{head_columns(sweep_), {}};
  for (const char* c : {"Kernel", "Samples", "Dropped", "Launches", "SamplingPeriodCycles", "Note"})
    t.columns.emplace_back(c);
  for (const SampledKernel& k : code_.kernels) {
    std::vector<Cell> row = head_cells(sweep_, k.annotation, k.config_index);
    row.insert(row.end(), {k.kernel, static_cast<std::int64_t>(k.samples), static_cast<std::int64_t>(k.dropped),
                           static_cast<std::int64_t>(k.launches),
                           k.period_log2 ? Cell(static_cast<std::int64_t>(std::int64_t{1} << k.period_log2)) : Cell(),
                           k.note});
    t.rows.push_back(std::move(row));
    if (configs) configs->push_back(k.config_index);
  }
  return t;
}

std::string LineResults::listing(std::size_t top) const {
  std::ostringstream out;
  const std::vector<SourceLine> lines = detail::source_lines(code_);
  detail::SourceLines texts(code_.sources);
  const SessionInfo& s = sweep_.session();
  out << "kscope lines: " << s.gpu << " | backend " << to_string(s.backend);
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

  Table t{head_columns(candidate.sweep()), {}};
  for (const char* c : {"Kernel", "File", "Line", "LineText", "BaselineSharePct", "SharePct", "DeltaPct",
                        "BaselineDominantStall", "DominantStall"})
    t.columns.emplace_back(c);
  detail::SourceLines texts(candidate.code().sources), baseline_texts(baseline.code().sources);
  std::vector<std::pair<double, std::vector<Cell>>> rows;
  for (const auto& [key, pair] : matched) {
    const auto [a, b] = pair;
    const SourceLine& any = b ? *b : *a;
    const LineResults& side = b ? candidate : baseline;
    const double share_a = a ? detail::share_pct(a->samples, a->kernel_samples) : 0.0;
    const double share_b = b ? detail::share_pct(b->samples, b->kernel_samples) : 0.0;
    std::vector<Cell> row = head_cells(side.sweep(), any.annotation, any.config_index);
    const std::string text = b ? texts.at(any.at.file, any.at.line) : baseline_texts.at(any.at.file, any.at.line);
    row.insert(row.end(), {any.kernel, any.at.file, any.at.line ? Cell(static_cast<std::int64_t>(any.at.line)) : Cell(),
                           detail::printable(text), share_a, share_b, share_b - share_a,
                           a ? a->stalls.front().first : std::string(), b ? b->stalls.front().first : std::string()});
    rows.emplace_back(std::abs(share_b - share_a), std::move(row));
  }
  std::stable_sort(rows.begin(), rows.end(), [](const auto& x, const auto& y) { return x.first > y.first; });
  for (auto& [delta, row] : rows) t.rows.push_back(std::move(row));
  return t;
}

}  // namespace kscope

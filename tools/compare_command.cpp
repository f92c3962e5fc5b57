#include "compare_command.hpp"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <optional>
#include <nlohmann/json.hpp>
#include <ostream>
#include <sstream>

#include "command_line.hpp"
#include "kscope/compare.hpp"
#include "kscope/detail/caller.hpp"
#include "kscope/detail/enum_names.hpp"
#include "kscope/detail/result_files.hpp"
#include "kscope/detail/session_headline.hpp"
#include "kscope/detail/text_width.hpp"
#include "kscope/errors.hpp"
#include "kscope/results.hpp"
#include "kscope/table.hpp"

namespace {

constexpr int kNothingSlower = 0;
constexpr int kSlower = 1;
constexpr int kCannotCompare = 2;
constexpr int kCannotJudge = 3;

const char* const kUsage =
    "usage: kscope compare BASELINE.json CANDIDATE.json [--threshold PCT] [--alpha A] [--min-samples N]\n"
    "                      [--max-rsd PCT] [--direction METRIC=lower|higher|undefined]... [--json]\n"
    "                      [--output-prefix PREFIX]\n";

const char* const kDescription =
    "Compares two results saved by Results::write_json (C++) or ProfileResults.save (Python), row by row\n"
    "(annotation, config, metric), on the raw per-run samples of both. A row is slower or faster when a\n"
    "two-sided Mann-Whitney U test gives p < alpha AND the whole 95% bootstrap interval of the ratio of\n"
    "medians lies beyond the threshold; same otherwise. A duration whose runs' SM clocks varied must\n"
    "change the same way in cycles (duration x SM clock), else it is ambiguous. too_few_samples when a\n"
    "side has fewer than min-samples valid runs, or too few for the U test to reach p < alpha at all;\n"
    "unstable when one has an RSD above max-rsd. A file may be a pipe (<(cat a.json)); a file name that\n"
    "starts with '-' goes after --. Durations are lower-is-better, rates (GB/s, TFLOP/s, %)\n"
    "higher-is-better; a count of work (bytes, instructions) that moves is 'changed'. Rows measured on\n"
    "one side only are listed as only_in_baseline / only_in_candidate.";

const char* const kFooter =
    "Verdicts are coloured on a terminal (NO_COLOR turns that off). Results of different backends,\n"
    "cache control or clock control are refused; a different GPU model or driver, or observed SM clocks\n"
    "that differ by more than the threshold, give a warning and flag the rows.\n"
    "\n"
    "Exit status:\n"
    "  0   no row is slower, and every row measured on both sides could be judged\n"
    "  1   at least one row is slower\n"
    "  2   the inputs cannot be compared: a file that cannot be read, is not a kscope results file or is\n"
    "      of another format version; different backends, cache control, clock control or config axes;\n"
    "      a --direction naming a metric neither file holds; or a candidate row without a valid run\n"
    "  3   cannot judge: no row is slower, but a side of some row has fewer than --min-samples valid\n"
    "      runs, or too few for the U test (too_few_samples; results of runs=1 have one)\n"
    "  64  bad command line\n"
    "  74  the output (the table, or the --output-prefix files) could not be written\n";

struct UsageError {
  std::string message;
};

struct Request {
  std::string baseline, candidate;
  kscope::CompareOptions options;
  bool json = false;
  std::string output_prefix;  // where the comparison's files go; empty: nowhere
};

double number(const std::string& flag, const std::string& text) {
  char* end = nullptr;
  errno = 0;
  const double value = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0' || errno != 0)
    throw UsageError{flag + " takes a number, not '" + text + "'"};
  return value;
}

kscope::MetricDirection direction(const std::string& text) {
  const auto equals = text.rfind('=');
  const auto found = equals == std::string::npos || equals == 0
                         ? std::nullopt
                         : kscope::detail::enum_named<kscope::MetricDirection>(text.substr(equals + 1));
  if (!found) {
    std::string choices;
    for (const auto& [value, name] : kscope::detail::enum_names(kscope::MetricDirection{}))
      choices += std::string(choices.empty() ? "" : value == kscope::MetricDirection::undefined ? " or " : ", ") +
                 "METRIC=" + name;
    throw UsageError{"--direction takes " + choices + ", not '" + text + "'"};
  }
  return *found;
}

// The options' text as CompareOptions; throws UsageError.
struct Texts {
  std::string threshold, alpha, min_samples, max_rsd;
  std::vector<std::string> directions;
};

kscope::CompareOptions options_from(const Texts& t) {
  kscope::CompareOptions o;
  if (!t.threshold.empty()) o.threshold_pct = number("--threshold", t.threshold);
  if (!t.alpha.empty()) o.alpha = number("--alpha", t.alpha);
  if (!t.max_rsd.empty()) o.max_rsd_pct = number("--max-rsd", t.max_rsd);
  if (!t.min_samples.empty()) {
    const double n = number("--min-samples", t.min_samples);
    if (n < 0 || n != std::floor(n) || n > 1e9)
      throw UsageError{"--min-samples takes a whole number, not '" + t.min_samples + "'"};
    o.min_samples = static_cast<std::size_t>(n);
  }
  for (const auto& d : t.directions) o.directions[d.substr(0, d.rfind('='))] = direction(d);
  try {
    o.validate();
  } catch (const kscope::ConfigError& e) {
    throw UsageError{e.what()};
  }
  return o;
}

std::string format(const char* pattern, double value) {
  if (std::isnan(value)) return "-";
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, pattern, value);
  return buffer;
}

// As the results table shows numbers: durations in ns in plain digits, otherwise 4 significant digits.
std::string value_text(double v) {
  return format(std::abs(v) >= 1e4 && std::abs(v) < 1e7 ? "%.0f" : "%.4g", v);
}

std::string change_text(double ratio) { return format("%+.1f%%", 100 * (ratio - 1)); }

std::string describe(const std::string& path, const kscope::Results& r) {
  return path + "  (" + kscope::detail::session_headline_with_machine(r.session()) + ")";
}

const char* colour(kscope::Verdict v) {
  switch (v) {
    case kscope::Verdict::slower: return "\033[31m";   // red
    case kscope::Verdict::faster: return "\033[32m";   // green
    case kscope::Verdict::unstable:
    case kscope::Verdict::ambiguous:
    case kscope::Verdict::too_few_samples: return "\033[33m";  // yellow
    case kscope::Verdict::changed: return "\033[35m";  // magenta
    case kscope::Verdict::only_in_baseline:
    case kscope::Verdict::only_in_candidate: return "\033[36m";  // cyan
    case kscope::Verdict::same: break;
  }
  return "";
}

std::string config_text(const kscope::Comparison& c, const kscope::ComparisonRow& r) {
  std::string text;
  for (std::size_t i = 0; i < r.config.size(); ++i) text += " " + c.axis_names[i] + "=" + r.config[i].to_string();
  return text;
}

void print_table(const kscope::Comparison& c, std::ostream& out, bool colours) {
  std::vector<std::string> header{"Annotation"};
  header.insert(header.end(), c.axis_names.begin(), c.axis_names.end());
  for (const char* h : {"Metric", "Unit", "Baseline", "Candidate", "Change", "95% CI of change", "p", "Verdict"})
    header.emplace_back(h);
  std::vector<std::vector<std::string>> lines{header};
  for (const auto& r : c.rows) {
    std::vector<std::string> cells{r.annotation};
    for (const auto& v : r.config) cells.push_back(v.to_string());
    for (const std::string& cell :
         {r.metric, r.unit, value_text(r.baseline.median), value_text(r.candidate.median), change_text(r.ratio),
          std::isnan(r.ci_lower) ? "-" : change_text(r.ci_lower) + " .. " + change_text(r.ci_upper),
          format("%.2g", r.p_value), to_string(r.verdict)})
      cells.push_back(cell);
    lines.push_back(std::move(cells));
  }
  std::vector<std::size_t> widths(header.size(), 0);
  for (const auto& line : lines)
    for (std::size_t i = 0; i < line.size(); ++i) widths[i] = std::max(widths[i], kscope::detail::display_width(line[i]));
  for (std::size_t l = 0; l < lines.size(); ++l) {
    std::string text;
    for (std::size_t i = 0; i < lines[l].size(); ++i) {
      const bool last = i + 1 == lines[l].size();
      const std::string padding(last ? 0 : widths[i] - kscope::detail::display_width(lines[l][i]) + 2, ' ');
      const char* on = l > 0 && last && colours ? colour(c.rows[l - 1].verdict) : "";
      text += *on ? on + lines[l][i] + "\033[0m" : lines[l][i];
      text += padding;
    }
    out << text << "\n";
  }
}

void print_text(const Request& request, const kscope::Results& baseline, const kscope::Results& candidate,
                const kscope::Comparison& c, std::ostream& out, bool colours) {
  out << "baseline:  " << describe(request.baseline, baseline) << "\n"
      << "candidate: " << describe(request.candidate, candidate) << "\n";
  for (const auto& w : c.warnings) out << "warning: " << w << "\n";
  out << "\n";
  print_table(c, out, colours);
  bool first = true;
  for (const auto& r : c.rows) {
    if (r.verdict == kscope::Verdict::same) continue;
    if (first) out << "\n";
    first = false;
    out << r.annotation << config_text(c, r) << " " << r.metric << ": " << to_string(r.verdict) << ": " << r.reason
        << "\n";
  }
  std::string counts;
  for (const auto& [v, name] : kscope::detail::enum_names(kscope::Verdict{}))  // the worst first
    if (const std::size_t n = c.count(v)) counts += (counts.empty() ? "" : ", ") + std::to_string(n) + " " + to_string(v);
  const kscope::CompareOptions& o = c.options;
  out << "\n" << c.rows.size() << (c.rows.size() == 1 ? " row: " : " rows: ") << (counts.empty() ? "none" : counts)
      << " (threshold " << format("%g", o.threshold_pct) << "%, alpha " << format("%g", o.alpha) << ", min-samples "
      << o.min_samples << ", max-rsd " << format("%g", o.max_rsd_pct) << "%)\n";
}

void print_json(const Request& request, const kscope::Comparison& c, std::ostream& out) {
  nlohmann::ordered_json doc;
  doc["baseline"] = request.baseline;
  doc["candidate"] = request.candidate;
  std::ostringstream comparison;  // the comparison's own JSON (its comparison.json), inside this document
  c.write_json(comparison);
  doc.update(nlohmann::ordered_json::parse(comparison.str()));
  out << doc.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) << "\n";
}

bool colours_wanted(bool terminal) {
  const char* no_color = std::getenv("NO_COLOR");  // no-color.org: set and not empty turns colour off
  return terminal && (no_color == nullptr || *no_color == '\0');
}

}  // namespace

int compare_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err, bool terminal) {
  // The messages name the command's flags (kscope::detail::compare_option) while it runs.
  const kscope::detail::CallerScope caller(kscope::detail::Caller::command_line);
  CLI::App app{kDescription, "kscope compare"};
  app.footer(kFooter);
  Request request;
  Texts texts;
  app.add_option("BASELINE.json", request.baseline, "the baseline's results file")->required()->type_name("");
  app.add_option("CANDIDATE.json", request.candidate, "the candidate's results file")->required()->type_name("");
  const auto last_wins = CLI::MultiOptionPolicy::TakeLast;
  app.add_option("--threshold", texts.threshold, "smallest change that counts, in % of the baseline median (default 2)")
      ->type_name("PCT")->multi_option_policy(last_wins);
  app.add_option("--alpha", texts.alpha, "significance level of the U test (default 0.05)")
      ->type_name("A")->multi_option_policy(last_wins);
  app.add_option("--min-samples", texts.min_samples, "fewest valid runs a side needs for a verdict (default 5)")
      ->type_name("N")->multi_option_policy(last_wins);
  app.add_option("--max-rsd", texts.max_rsd, "largest relative standard deviation (%) of a side still judged (default 10)")
      ->type_name("PCT")->multi_option_policy(last_wins);
  app.add_option("--direction", texts.directions, "metric M is lower (lower is better), higher, or undefined; repeatable")
      ->type_name("M=DIR");
  app.add_flag("--json", request.json, "print the comparison as JSON instead of a table");
  app.add_option("--output-prefix", request.output_prefix,
                 "also write the comparison as " + kscope::detail::comparison_files_text("PREFIX"))
      ->type_name("PREFIX")->multi_option_policy(last_wins);
  if (const auto status = kscope::cli::parse(app, args, out, err, kUsage)) return *status;
  try {
    request.options = options_from(texts);
  } catch (const UsageError& e) {
    err << "kscope compare: " << e.message << "\n" << kUsage;
    return kscope::cli::kUsageError;
  }
  try {
    const kscope::Results baseline = kscope::load_results(request.baseline);
    const kscope::Results candidate = kscope::load_results(request.candidate);
    const kscope::Comparison comparison = kscope::compare(baseline, candidate, request.options);
    if (request.json) print_json(request, comparison, out);
    else print_text(request, baseline, candidate, comparison, out, colours_wanted(terminal));
    if (!request.output_prefix.empty()) {
      try {
        comparison.write_all(request.output_prefix);
      } catch (const kscope::FileError& e) {
        err << "kscope compare: " << e.what() << "\n";
        return kscope::cli::kOutputError;
      }
    }
    // A row the candidate measured without one valid run is no pass: nothing shows it is not slower.
    std::vector<std::string> unmeasured;
    for (const auto& r : comparison.rows)
      if (r.candidate.config_index && r.candidate.count == 0)
        unmeasured.push_back(r.annotation + config_text(comparison, r) + " " + r.metric);
    if (!unmeasured.empty()) {
      err << "kscope compare: the candidate has no valid sample in " << unmeasured.size()
          << (unmeasured.size() == 1 ? " row" : " rows") << " (" << unmeasured.front()
          << (unmeasured.size() > 1 ? ", ..." : "")
          << "): every run there is NaN (failed, or excluded as throttled), so nothing says it is not slower; "
             "measure the candidate again\n";
      return kCannotCompare;
    }
    switch (comparison.gate()) {
      case kscope::Gate::slower: return kSlower;
      case kscope::Gate::cannot_judge: return kCannotJudge;
      case kscope::Gate::passed: break;
    }
    return kNothingSlower;
  } catch (const kscope::Error& e) {
    err << "kscope compare: " << e.what() << "\n";
    return kCannotCompare;
  }
}

#include "core/decisions/evaluation_report.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <utility>

#include "core/model/median.hpp"
#include "kscope/roofline.hpp"

namespace kscope::detail {
namespace {

// varying_time: a run whose GPU work is this many times longer or shorter than the side's median is
// out of line, and this many such runs (when the reference has none) are a finding, not a stray one.
constexpr double kOutOfLineFactor = 3;
constexpr std::size_t kOutOfLineRuns = 2;

std::string number(double value, int precision = 4) {
  std::ostringstream out;
  out.precision(precision);
  out << value;
  return out.str();
}

std::string activities(std::size_t n) { return std::to_string(n) + (n == 1 ? " activity" : " activities"); }

// The durations of one config's recorded runs, by side and recorded run.
struct Durations {
  std::array<std::map<std::size_t, double>, 2> by_run;
};

std::map<std::size_t, Durations> durations_of(const Results& measurements) {
  std::map<std::size_t, Durations> out;
  const std::string metric = measurements.session().metrics.empty() ? "" : measurements.session().metrics.front();
  for (const SampleRow& s : measurements.samples()) {
    if (!metric.empty() && s.metric != metric) continue;
    if (s.annotation == to_string(Side::candidate))
      out[s.config_index].by_run[index_of(Side::candidate)][s.run] = s.value;
    else if (s.annotation == to_string(Side::reference))
      out[s.config_index].by_run[index_of(Side::reference)][s.run] = s.value;
  }
  return out;
}

// Collects the findings of one config, one record per (side, finding), in Finding order.
class FindingsOf {
 public:
  explicit FindingsOf(std::size_t config) : config_(config) {}
  void seen(Side side, Finding finding, const std::string& detail) {
    auto [it, added] = found_.try_emplace({index_of(side), static_cast<int>(finding)});
    FindingRecord& f = it->second;
    if (added) f = {config_, side, finding, 0, detail};
    ++f.runs;
  }
  std::vector<FindingRecord> records() const {
    std::vector<FindingRecord> out;
    for (const auto& [key, f] : found_) out.push_back(f);
    std::stable_sort(out.begin(), out.end(), [](const FindingRecord& a, const FindingRecord& b) {
      return a.finding != b.finding ? a.finding < b.finding : a.side < b.side;
    });
    return out;
  }

 private:
  std::size_t config_;
  std::map<std::pair<std::size_t, int>, FindingRecord> found_;
};

void activity_findings(const std::vector<RunRecord>& runs, Side side, FindingsOf& findings) {
  const std::size_t s = index_of(side);
  const RunRecord* first_measured = nullptr;
  for (const RunRecord& r : runs) {
    const CallActivity& a = r.activity[s];
    if (!r.recorded || !a.measured || (side == Side::candidate && r.candidate_raised)) continue;
    if (a.names.empty()) findings.seen(side, Finding::no_work, r.label + " caused no kernel, copy or fill");
    if (a.unjoined > 0)
      findings.seen(side, Finding::unjoined_work,
                    "in " + r.label + ", " + activities(a.unjoined) + " ('" + a.first_unjoined +
                        "' first) still running when the caller's stream reached the end of the call");
    if (a.launched_after_return > 0)
      findings.seen(side, Finding::work_after_return,
                    "in " + r.label + ", " + activities(a.launched_after_return) +
                        " launched after the call returned");
    if (!first_measured) {
      first_measured = &r;
    } else if (a.names != first_measured->activity[s].names) {
      const CallActivity& f = first_measured->activity[s];
      findings.seen(side, Finding::varying_work,
                    first_measured->label + " caused " + activities(f.names.size()) + ", " + r.label + " " +
                        activities(a.names.size()) + (f.names.size() == a.names.size() ? " of other names" : ""));
    }
  }
}

// Each side's GPU busy time (its activities' durations summed) in its recorded runs: the work a call
// did, without the idle between its launches that a busy host stretches (a call's time includes it).
std::array<std::map<std::size_t, double>, 2> busy_by_run(const std::vector<RunRecord>& runs) {
  std::array<std::map<std::size_t, double>, 2> out;
  for (const RunRecord& r : runs)
    for (Side side : kSides) {
      const CallActivity& activity = r.activity[index_of(side)];
      if (r.recorded && activity.measured) out[index_of(side)][r.run] = activity.busy_ns;
    }
  return out;
}

// How many of a side's durations lie beyond kOutOfLineFactor of its median.
std::size_t out_of_line(const std::map<std::size_t, double>& durations) {
  std::vector<double> values;
  for (const auto& [run, d] : durations)
    if (std::isfinite(d)) values.push_back(d);
  const double middle = median(values);
  std::size_t count = 0;
  if (!(middle > 0)) return 0;
  for (const auto& [run, d] : durations)
    count += std::isfinite(d) && (d > kOutOfLineFactor * middle || d < middle / kOutOfLineFactor);
  return count;
}

// The fastest a side could do its declared work: at the device's rated clocks, the work's bytes at
// the DRAM roof or its FLOPs at the compute roof, whichever takes longer; NaN when nothing is known.
double fastest_possible_ns(const Results& measurements, std::size_t config, const std::string& annotation) {
  const SessionInfo& session = measurements.session_of(config);
  for (const SummaryRow& row : measurements.rows()) {
    if (row.config_index != config || row.annotation != annotation || !row.work) continue;
    const Roofs roofs = session_roofs(session);
    double seconds = NAN;
    if (row.work->bytes > 0 && roofs.dram_bytes_per_s > 0) seconds = row.work->bytes / roofs.dram_bytes_per_s;
    const double flops_per_s = roofs.flops_per_s(row.work->kind);
    if (row.work->flops > 0 && flops_per_s > 0) seconds = std::fmax(std::isnan(seconds) ? 0 : seconds,
                                                                    row.work->flops / flops_per_s);
    return seconds * 1e9;
  }
  return NAN;
}

EvaluationRow verdict_of(EvaluationRow row, const std::vector<FindingRecord>& findings, const EvaluateOptions& options) {
  const SameBand band = same_band(options.threshold_pct);
  if (!row.correct) {
    row.verdict = EvaluationVerdict::incorrect;
    row.reason = row.mismatch + (row.failing_seed ? " (seed " + std::to_string(*row.failing_seed) + ")" : "");
    return row;
  }
  if (!findings.empty()) {
    const FindingRecord& f = findings.front();
    row.verdict = EvaluationVerdict::suspect;
    row.reason = to_string(f.finding) + " (" + to_string(f.side) + "): " + f.detail +
                 (findings.size() > 1 ? "; and " + std::to_string(findings.size() - 1) + " more finding(s)" : "");
    return row;
  }
  const std::string interval = "speedup " + number(row.speedup) + ", " + number(options.confidence * 100, 3) +
                               "% interval [" + number(row.speedup_ci_lower) + ", " + number(row.speedup_ci_upper) + "]";
  if (std::isnan(row.speedup_ci_lower)) {
    row.verdict = EvaluationVerdict::same;
    row.reason = std::to_string(row.runs) + " paired runs give no " + number(options.confidence * 100, 3) +
                 "% interval of the speedup: no difference shown (give at least 6 runs at 95%)";
  } else if (row.speedup_ci_lower > band.upper) {
    row.verdict = EvaluationVerdict::faster;
    row.reason = interval + " lies above " + number(band.upper);
  } else if (row.speedup_ci_upper < band.lower) {
    row.verdict = EvaluationVerdict::slower;
    row.reason = interval + " lies below " + number(band.lower);
  } else {
    row.verdict = EvaluationVerdict::same;
    const bool tie = row.speedup_ci_lower >= band.lower && row.speedup_ci_upper <= band.upper;
    row.reason = interval + (tie ? " lies within " : " reaches into ") + "[" + number(band.lower) + ", " + number(band.upper) +
                 "]" + (tie ? ": a tie" : ": no difference shown (more runs narrow the interval)");
  }
  return row;
}

}  // namespace

EvaluationReport report_evaluation(const std::vector<std::vector<RunRecord>>& records, const Results& measurements,
                                   const EvaluateOptions& options) {
  EvaluationReport report;
  const std::map<std::size_t, Durations> durations = durations_of(measurements);
  std::set<std::size_t> configs;
  for (const SampleRow& s : measurements.samples()) configs.insert(s.config_index);
  for (std::size_t config : configs) {
    const std::vector<RunRecord> none;
    const std::vector<RunRecord>& runs = config < records.size() ? records[config] : none;
    EvaluationRow row;
    row.config_index = config;
    FindingsOf findings(config);

    // The durations: paired by recorded run.
    const auto d = durations.find(config);
    std::vector<double> ratios, candidate, reference;
    if (d != durations.end()) {
      const auto& mine = d->second.by_run[index_of(Side::candidate)];
      const auto& theirs = d->second.by_run[index_of(Side::reference)];
      for (const auto& [run, c] : mine) {
        const auto r = theirs.find(run);
        if (r == theirs.end() || std::isnan(c) || std::isnan(r->second)) continue;
        candidate.push_back(c);
        reference.push_back(r->second);
        // Neither side timed any work: no speedup (NaN, left out of the interval), not an infinite one.
        ratios.push_back(c > 0 ? r->second / c : r->second > 0 ? INFINITY : NAN);
      }
    }
    const auto busy = busy_by_run(runs);
    const auto& mine_busy = busy[index_of(Side::candidate)];
    const std::size_t mine_out = out_of_line(mine_busy);
    if (mine_out >= kOutOfLineRuns && out_of_line(busy[index_of(Side::reference)]) == 0)
      findings.seen(Side::candidate, Finding::varying_time,
                    std::to_string(mine_out) + " of its " + std::to_string(mine_busy.size()) +
                        " runs kept the GPU busy over " + number(kOutOfLineFactor, 2) +
                        " times longer or shorter than its median (the reference's did not)");
    row.runs = ratios.size();
    row.candidate_median_ns = median(candidate);
    row.reference_median_ns = median(reference);
    const MedianInterval speedup = median_interval(ratios, options.confidence);
    row.speedup = speedup.median;
    row.speedup_ci_lower = speedup.lower;
    row.speedup_ci_upper = speedup.upper;

    // The outputs.
    for (const RunRecord& r : runs) {
      if (!r.checked) continue;
      ++row.checked_runs;
      row.max_abs_error = std::isnan(row.max_abs_error) ? r.max_abs_error : std::fmax(row.max_abs_error, r.max_abs_error);
      row.max_rel_error = std::isnan(row.max_rel_error) ? r.max_rel_error : std::fmax(row.max_rel_error, r.max_rel_error);
      if (r.failure.empty()) continue;
      if (row.mismatched_runs++ == 0) {
        row.correct = false;
        row.failing_seed = r.seed;
        row.mismatch = r.label + ": " + r.failure;
      }
    }

    // The findings.
    for (Side side : kSides) activity_findings(runs, side, findings);
    for (const RunRecord& r : runs)
      for (Side side : kSides)
        for (const Observation& o : r.observed[index_of(side)])
          findings.seen(side, o.finding, r.label + ": " + o.detail);
    for (Side side : kSides) {
      const double fastest = fastest_possible_ns(measurements, config, to_string(side));
      const double median = side == Side::candidate ? row.candidate_median_ns : row.reference_median_ns;
      if (median < fastest)
        findings.seen(side, Finding::implausible_speed,
                      "its median " + number(median) + " ns is below the " + number(fastest) + " ns that its declared "
                      "work takes at the device's DRAM and compute roofs at the rated clocks (is the declared work "
                      "too large?)");
    }

    std::vector<FindingRecord> found = findings.records();
    for (const FindingRecord& f : found)
      if (std::find(row.findings.begin(), row.findings.end(), f.finding) == row.findings.end())
        row.findings.push_back(f.finding);
    std::sort(row.findings.begin(), row.findings.end());
    report.rows.push_back(verdict_of(std::move(row), found, options));
    report.findings.insert(report.findings.end(), found.begin(), found.end());
  }
  return report;
}

}  // namespace kscope::detail

#include "core/decisions/race.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "core/model/caller_language.hpp"
#include "core/statistics/significance.hpp"
#include "core/model/suggest.hpp"
#include "kscope/errors.hpp"
#include "kscope/statistics.hpp"

namespace kscope::detail {
namespace {

std::string change(double ratio) { return formatted("%+.1f%%", 100 * (ratio - 1)); }

double median_of(const std::vector<double>& values) {
  return summarize(values, std::numeric_limits<double>::infinity()).median;
}

std::vector<double> durations_of(const std::vector<RunSample>& samples) {
  std::vector<double> out;
  for (const RunSample& s : samples) out.push_back(s.duration);
  return out;
}

std::vector<double> clocks_of(const std::vector<RunSample>& samples) {
  std::vector<double> out;
  for (const RunSample& s : samples) out.push_back(s.sm_clock_mhz);
  return out;
}

std::vector<double> scaled(std::vector<double> values, double factor) {
  for (double& v : values) v *= factor;
  return values;
}

std::string runs_text(std::size_t n) { return std::to_string(n) + (n == 1 ? " run" : " runs"); }

}  // namespace

Racer::Racer(std::vector<std::string> names, const RaceOptions& options, std::size_t max_runs)
    : names_(std::move(names)), options_(options), max_runs_(max_runs), configs_(names_.size()) {
  // A look after the screening round and after each racing round, whose runs double up to max_runs.
  looks_ = 1;
  for (std::size_t n = options.first_runs; n < max_runs; n = std::min(2 * n, max_runs)) ++looks_;
  const double tests = static_cast<double>(std::max<std::size_t>(configs_.size(), 2) - 1) * static_cast<double>(looks_);
  elimination_level_ = options.alpha / 2 / tests;
  decided_ = configs_.size() <= 1;  // a shard may have nothing to race
  if (configs_.size() == 1) {
    configs_[0].outcome = RaceOutcome::winner;
    configs_[0].reason = "the only config raced";
  }
}

std::vector<std::size_t> Racer::alive() const {
  std::vector<std::size_t> out;
  for (std::size_t c = 0; c < configs_.size(); ++c)
    if (!configs_[c].outcome) out.push_back(c);
  return out;
}

std::vector<double> Racer::medians() const {
  std::vector<double> out(configs_.size(), NAN);
  for (std::size_t c : alive()) {
    const double m = median_of(durations_of(configs_[c].samples));
    out[c] = std::isnan(m) ? INFINITY : m;
  }
  return out;
}

std::size_t Racer::leader(const std::vector<double>& medians) const {
  const std::vector<std::size_t> left = alive();
  return *std::min_element(left.begin(), left.end(), [&](std::size_t a, std::size_t b) { return medians[a] < medians[b]; });
}

std::vector<std::size_t> Racer::finalists() const {
  std::vector<std::size_t> out = alive();
  const std::vector<double> medians = this->medians();
  // Stable: equal medians keep the sweep's order, so the choice is the same every time.
  std::stable_sort(out.begin(), out.end(), [&](std::size_t a, std::size_t b) { return medians[a] < medians[b]; });
  if (out.size() > options_.max_finalists) out.resize(options_.max_finalists);
  std::sort(out.begin(), out.end());
  return out;
}

std::optional<RoundPlan> Racer::next_round() const {
  if (decided_) return std::nullopt;
  const std::vector<std::size_t> left = alive();
  if (rounds_.empty()) return RoundPlan{"screening", left, options_.first_runs, 1};
  const std::vector<std::size_t> racing = contested();
  if (left.size() > options_.max_finalists && rounds_.size() < looks_ && racing.size() > 1) {
    // Double the most measured one's runs, up to max_runs; the others get as many more.
    std::size_t most = 0;
    for (std::size_t c : racing) most = std::max(most, configs_[c].samples.size());
    if (most < max_runs_) return RoundPlan{"racing", racing, std::min(most, max_runs_ - most), 1};
  }
  // The final round: pass p visits the finalists starting from the p-th, so that none always goes first.
  const std::vector<std::size_t> chosen = finalists();
  RoundPlan final{"final", {}, 1, options_.final_runs};
  for (std::size_t p = 0; p < options_.final_runs; ++p)
    for (std::size_t k = 0; k < chosen.size(); ++k) final.visits.push_back(chosen[(p + k) % chosen.size()]);
  return final;
}

void Racer::record_round(const RoundPlan& plan, const std::vector<std::vector<RunSample>>& visits) {
  if (visits.size() != plan.visits.size())
    throw InternalError("a race round recorded " + std::to_string(visits.size()) + " visits of the " +
                        std::to_string(plan.visits.size()) + " planned (kscope bug: please report it with this message)");
  if (plan.kind != "final") {
    for (std::size_t v = 0; v < visits.size(); ++v) {
      auto& samples = configs_[plan.visits[v]].samples;
      samples.insert(samples.end(), visits[v].begin(), visits[v].end());
    }
    rounds_.push_back({plan.kind, plan.visits.size(), plan.runs, 0});
    rounds_.back().eliminated = eliminate();
    const std::vector<std::size_t> left = alive();
    if (left.size() == 1) {
      Config& last = configs_[left.front()];
      last.outcome = RaceOutcome::winner;
      last.round = rounds_.size();
      last.reason = "the only config left after round " + std::to_string(rounds_.size()) + ": every other one was " +
                    "shown slower by more than " + formatted("%g", options_.threshold_pct) + "%";
      decided_ = true;
    }
    return;
  }
  const std::vector<std::size_t> chosen = finalists();
  for (std::size_t v = 0; v < visits.size(); ++v)
    configs_[plan.visits[v]].final.push_back(visits[v].empty() ? RunSample{NAN, NAN} : visits[v].front());
  rounds_.push_back({plan.kind, chosen.size(), plan.passes, 0});
  for (std::size_t c : alive()) {
    if (std::binary_search(chosen.begin(), chosen.end(), c)) continue;
    configs_[c].outcome = RaceOutcome::left_out;
    configs_[c].round = rounds_.size() - 1;
    configs_[c].reason = "not shown slower than the leader by more than " + formatted("%g", options_.threshold_pct) +
                         "% after " + runs_text(configs_[c].samples.size()) + ", but left out of the final round: " +
                         std::to_string(chosen.size()) + " others had lower medians (max_finalists)";
  }
  judge_final(chosen);
  decided_ = true;
}

std::vector<std::size_t> Racer::contested() const {
  const std::vector<double> medians = this->medians();
  const std::size_t first = leader(medians);
  std::vector<std::size_t> out;
  for (std::size_t c : alive())
    if (medians[c] == medians[first] || medians[c] > medians[first] * same_band(options_.threshold_pct).upper) out.push_back(c);
  return out;
}

std::size_t Racer::eliminate() {
  const std::vector<std::size_t> left = alive();
  if (left.size() < 2) return 0;
  const std::vector<double> medians = this->medians();
  const std::size_t leader = this->leader(medians);
  const double margin = same_band(options_.threshold_pct).upper;
  const std::vector<double> leader_times = durations_of(configs_[leader].samples);
  const std::vector<double> leader_clocks = clocks_of(configs_[leader].samples);
  const std::vector<double> bar = scaled(leader_times, margin);
  const std::vector<double> bar_cycles = scaled(cycles_of(leader_times, leader_clocks), margin);
  std::size_t dropped = 0;
  for (std::size_t c : left) {
    if (c == leader) continue;
    Config& config = configs_[c];
    const std::vector<double> times = durations_of(config.samples), clocks = clocks_of(config.samples);
    const double p = u_test_p_greater(times, bar);
    if (!(p < elimination_level_)) continue;
    std::string cycles;
    if (clocks_vary(times, clocks, leader_times, leader_clocks)) {
      const double p_cycles = u_test_p_greater(cycles_of(times, clocks), bar_cycles);
      if (!(p_cycles < elimination_level_)) continue;  // the clocks may explain it
      cycles = ", in cycles p = " + formatted("%.2g", p_cycles);
    }
    config.outcome = RaceOutcome::eliminated;
    config.round = rounds_.size();
    config.reason = "after round " + std::to_string(rounds_.size()) + " (" + runs_text(times.size()) +
                    "): slower than the leader (" + names_[leader] + ") by more than " +
                    formatted("%g", options_.threshold_pct) + "%: median " + change(medians[c] / medians[leader]) +
                    ", one-sided U test p = " + formatted("%.2g", p) + cycles + " < " +
                    formatted("%.2g", elimination_level_) + " (alpha / 2 / (configs - 1) / looks)";
    ++dropped;
  }
  return dropped;
}

void Racer::judge_final(const std::vector<std::size_t>& finalists) {
  const std::size_t passes = configs_[finalists.front()].final.size();
  // Each finalist's duration relative to its pass's geometric mean: what one pass says of the order.
  std::vector<std::vector<double>> relative(finalists.size());
  for (std::size_t p = 0; p < passes; ++p) {
    double log_sum = 0;
    std::size_t valid = 0;
    for (std::size_t f : finalists)
      if (const double d = configs_[f].final[p].duration; d > 0) log_sum += std::log(d), ++valid;
    const double mean = valid ? std::exp(log_sum / static_cast<double>(valid)) : NAN;
    for (std::size_t k = 0; k < finalists.size(); ++k)
      relative[k].push_back(configs_[finalists[k]].final[p].duration / mean);
  }
  std::vector<double> scores;
  for (const auto& r : relative) scores.push_back(median_of(r));
  const std::size_t best = static_cast<std::size_t>(std::min_element(scores.begin(), scores.end()) - scores.begin());
  const std::size_t winner = finalists[best];
  Config& w = configs_[winner];
  w.outcome = RaceOutcome::winner;
  w.round = rounds_.size();
  w.ratio = w.ratio_lower = w.ratio_upper = 1;
  w.reason = "the lowest median duration relative to each pass's mean in the final round (" + std::to_string(passes) +
             " interleaved passes of " + std::to_string(finalists.size()) + " finalists)";
  // A clock that changed during the final favours the configs whose time follows it least.
  double highest = 0;
  for (std::size_t f : finalists)
    for (const RunSample& s : configs_[f].final) highest = std::max(highest, s.sm_clock_mhz);  // NaN never wins
  std::size_t slowed = 0;
  for (std::size_t p = 0; p < passes; ++p)
    slowed += std::any_of(finalists.begin(), finalists.end(),
                          [&](std::size_t f) { return configs_[f].final[p].sm_clock_mhz < highest * 0.99; });
  if (slowed)
    w.reason += "; the SM clock was more than 1% below its highest in " + std::to_string(slowed) + " of the passes, " +
                "which favours the configs whose time follows the clock least: lock the clocks (" + option("clock_control") +
                spell(" = ClockControl::base", "='base'") + ") to decide at one clock";
  const double confidence = 1 - options_.alpha / 2 / static_cast<double>(finalists.size() - 1);
  const double margin = same_band(options_.threshold_pct).upper;
  const std::vector<double> w_times = durations_of(w.final), w_clocks = clocks_of(w.final);
  const std::vector<double> w_cycles = cycles_of(w_times, w_clocks);
  for (std::size_t f : finalists) {
    if (f == winner) continue;
    Config& config = configs_[f];
    const std::vector<double> times = durations_of(config.final), clocks = clocks_of(config.final);
    const auto ratios = [](const std::vector<double>& mine, const std::vector<double>& theirs) {
      std::vector<double> r;
      for (std::size_t p = 0; p < mine.size(); ++p) r.push_back(mine[p] / theirs[p]);
      return r;
    };
    const MedianInterval in_time = median_interval(ratios(times, w_times), confidence);
    config.ratio = in_time.median;
    config.ratio_lower = in_time.lower;
    config.ratio_upper = in_time.upper;
    config.round = rounds_.size();
    const std::string interval = "median of the per-pass ratios to the winner " + change(in_time.median) + " (" +
                                 formatted("%.4g", 100 * confidence) + "% interval " + change(in_time.lower) + " to " +
                                 change(in_time.upper) + ")";
    bool slower = in_time.lower > margin;
    std::string cycles;
    if (slower && clocks_vary(times, clocks, w_times, w_clocks)) {
      const MedianInterval in_cycles = median_interval(ratios(cycles_of(times, clocks), w_cycles), confidence);
      slower = in_cycles.lower > margin;
      cycles = ", in cycles " + change(in_cycles.median) + " (" + change(in_cycles.lower) + " to " +
               change(in_cycles.upper) + ")";
    }
    config.outcome = slower ? RaceOutcome::slower : RaceOutcome::tied;
    config.reason = interval + cycles +
                    (slower ? ": slower than the winner by more than " + formatted("%g", options_.threshold_pct) + "%"
                     : std::isnan(in_time.lower)
                         ? ": too few passes for an interval at this confidence, so not shown slower: a tie"
                         : ": not shown slower than the winner by more than " + formatted("%g", options_.threshold_pct) +
                               "%: a tie");
  }
}

std::vector<RaceRow> Racer::rows() const {
  std::vector<RaceRow> rows;
  double winner_median = NAN;
  for (const Config& c : configs_) {
    std::vector<double> all = durations_of(c.samples);
    for (const RunSample& s : c.final) all.push_back(s.duration);
    RaceRow row;
    row.config_index = rows.size();
    row.outcome = c.outcome.value_or(RaceOutcome::left_out);
    row.round = c.round;
    row.runs = all.size();
    row.median_ns = median_of(all);
    row.final_median_ns = c.final.empty() ? NAN : median_of(durations_of(c.final));
    row.ratio = c.ratio;
    row.ratio_ci_lower = c.ratio_lower;
    row.ratio_ci_upper = c.ratio_upper;
    row.reason = c.reason;
    if (row.outcome == RaceOutcome::winner) winner_median = row.median_ns;
    rows.push_back(std::move(row));
  }
  for (RaceRow& row : rows)
    if (row.outcome == RaceOutcome::eliminated || row.outcome == RaceOutcome::left_out)
      row.ratio = row.median_ns / winner_median;
  return rows;
}

}  // namespace kscope::detail

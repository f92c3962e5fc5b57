// evaluate(): checks the request, runs a session whose body is the Evaluator's, and turns what it
// recorded into an Evaluation; the names, options and tables of kscope/evaluate.hpp.
#include "kscope/evaluate.hpp"

#include <array>
#include <cmath>
#include <ostream>
#include <utility>

#include "core/model/caller_language.hpp"
#include "core/decisions/evaluation_report.hpp"
#include "core/decisions/evaluation_tables.hpp"
#include "core/model/derived_columns.hpp"
#include "core/decisions/evaluator.hpp"
#include "core/engine/entry.hpp"
#include "core/model/log.hpp"
#include "core/files/output_formats.hpp"
#include "core/engine/session.hpp"
#include "core/model/suggest.hpp"
#include "kscope/detail/session_headline.hpp"
#include "kscope/backend_registry.hpp"
#include "kscope/detail/config_cells.hpp"
#include "kscope/detail/enum_names.hpp"

namespace kscope {
namespace {

using detail::number_text;

struct FindingFacts {
  Finding finding;
  const char* name;
  const char* meaning;
  const char* attack;
};

constexpr std::array<FindingFacts, 13> kFindings{{
    {Finding::unjoined_work, "unjoined_work",
     "work was still running on another stream when the caller's stream reached the end of the call, or the "
     "caller's stream was never ordered after it (it is timed all the same)",
     "work moved to a stream the timer does not wait for (stream injection)"},
    {Finding::work_after_return, "work_after_return",
     "GPU work was launched after the call returned, or an output changed after the call returned and the GPU "
     "drained",
     "threads that fill the output after the timer stops"},
    {Finding::varying_work, "varying_work",
     "the kernels, copies and fills of a call differ between runs of one config",
     "real work on some calls only (batch-and-skip)"},
    {Finding::varying_time, "varying_time",
     "in two or more runs the GPU was busy over 3 times longer or shorter than the median (the activities' "
     "durations summed, not the idle between them), where the reference's runs were not",
     "real work on some calls only, with the same kernels launched every call"},
    {Finding::no_work, "no_work", "a call caused no GPU work at all",
     "answers cached or precomputed on the host, returned without computing"},
    {Finding::output_aliases_input, "output_aliases_input",
     "an output shares memory with an input, where the reference's output does not",
     "inputs overwritten with the answer"},
    {Finding::output_aliases_earlier_output, "output_aliases_earlier_output",
     "an output shares memory with an output of the run before, which kscope still holds",
     "outputs cached and handed back again"},
    {Finding::output_aliases_reference, "output_aliases_reference",
     "an output shares memory with an output of the reference", "reuse of the reference's memory and answer"},
    {Finding::input_mutated, "input_mutated",
     "an input differs after the call from the reference's copy after its call",
     "inputs overwritten with the answer, or used as scratch space"},
    {Finding::output_not_plain, "output_not_plain",
     "an output is not a plain tensor or array (a subclass, or an object computed when read)",
     "lazy outputs computed when first read, after the timer stopped"},
    {Finding::timer_patched, "timer_patched", "a timing function of the process was replaced during the evaluation",
     "patched timers (torch.cuda.Event, time.perf_counter)"},
    {Finding::persisting_l2, "persisting_l2",
     "a persisting-L2 carve-out or access-policy window was set (kscope resets it before every run)",
     "persisting-L2 windows that keep inputs in cache across the cold-cache flush"},
    {Finding::implausible_speed, "implausible_speed",
     "the median duration is below what the declared work takes at the device's DRAM and compute roofs",
     "anything that skips work the other checks missed"},
}};

const FindingFacts& facts(Finding f) {
  for (const FindingFacts& x : kFindings)
    if (x.finding == f) return x;
  return kFindings.front();  // unreachable: every enumerator has a row
}

void check_contest(const Contest& contest) {
  const char* missing = !contest.inputs ? "inputs" : !contest.reference ? "reference" : !contest.candidate ? "candidate"
                                                                                                           : nullptr;
  if (missing)
    throw ConfigError(detail::spell("Contest::", "evaluate's ") + missing + " is empty: give the function that " +
                      (std::string(missing) == "inputs" ? "makes a run's inputs from a config and a seed"
                                                        : "computes the outputs from the inputs"));
}

}  // namespace

std::string to_string(Finding finding) { return facts(finding).name; }

std::optional<Finding> finding_named(const std::string& name) {
  for (const FindingFacts& f : kFindings)
    if (name == f.name) return f.finding;
  return std::nullopt;
}

const std::vector<Finding>& all_findings() {
  static const std::vector<Finding> all = [] {
    std::vector<Finding> v;
    for (const FindingFacts& f : kFindings) v.push_back(f.finding);
    return v;
  }();
  return all;
}

std::string describe(Finding finding) { return facts(finding).meaning; }
std::string attack_stopped(Finding finding) { return facts(finding).attack; }

std::string to_string(Side side) { return detail::enum_name(side); }

std::string to_string(EvaluationVerdict verdict) { return detail::enum_name(verdict); }

double default_rtol(DType dtype) {
  switch (dtype) {
    case DType::f64: return 1e-9;
    case DType::f32: return 1e-4;
    case DType::f16: return 5e-3;
    case DType::bf16: return 4e-2;
    case DType::f8_e4m3: return 1.25e-1;
    case DType::f8_e5m2: return 2.5e-1;
    default: return 0;
  }
}

void EvaluateOptions::validate() const {
  const auto check = [](const std::string& name, double value, bool ok, const std::string& accepts) {
    if (!ok)
      throw ConfigError(detail::spell("EvaluateOptions::", "") + name + " is " + number_text(value) + ": it takes " +
                        accepts);
  };
  if (rtol) check("rtol", *rtol, std::isfinite(*rtol) && *rtol >= 0, "a finite number >= 0");
  if (atol) check("atol", *atol, std::isfinite(*atol) && *atol >= 0, "a finite number >= 0");
  check("threshold_pct", threshold_pct, std::isfinite(threshold_pct) && threshold_pct >= 0,
        "a finite percentage >= 0 (2 by default)");
  check("confidence", confidence, confidence > 0 && confidence < 1, "a probability between 0 and 1 (0.95 by default)");
}

std::uint64_t seed_of(std::uint64_t seed, std::size_t config_index, std::size_t run) {
  std::uint64_t z = seed + 0x9e3779b97f4a7c15ull * (static_cast<std::uint64_t>(config_index) + 1) +
                    0xd1b54a32d192ed03ull * (static_cast<std::uint64_t>(run) + 1);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return (z ^ (z >> 31)) & 0x7fffffffull;
}

Evaluation::Evaluation(Results measurements, std::vector<EvaluationRow> rows, std::vector<FindingRecord> findings,
                       EvaluateOptions options)
    : measurements_(std::move(measurements)),
      rows_(std::move(rows)),
      findings_(std::move(findings)),
      options_(std::move(options)) {}

namespace {

std::vector<Value> config_of(const Evaluation& e, std::size_t config_index) {
  return e.measurements().configs().at(config_index).values();
}

// The names of findings, read back: a file's cell of them.
std::string finding_choices() {
  return "one of " + detail::joined_names(all_findings(), [](Finding f) { return "\"" + to_string(f) + "\""; });
}

bool read_finding(const Cell& cell, Finding& out) {
  const std::string* name = std::get_if<std::string>(&cell);
  const auto finding = name ? finding_named(*name) : std::nullopt;
  if (finding) out = *finding;
  return finding.has_value();
}

bool read_findings(const Cell& cell, std::vector<Finding>& out) {
  const std::string* names = std::get_if<std::string>(&cell);
  if (!names) return false;
  out.clear();
  for (std::size_t at = 0; at < names->size();) {
    const std::size_t end = std::min(names->find(',', at), names->size());
    if (!read_finding(Cell{names->substr(at, end - at)}, out.emplace_back())) return false;
    at = end + 1;
  }
  return true;
}

}  // namespace

namespace detail {

using E = Evaluation;
using T = ColumnType;

const DerivedColumns<E, EvaluationRow>& evaluation_table() {
  using R = EvaluationRow;
  static const DerivedColumns<E, R> table{
      {
          member_column<E>("Verdict", T::text, &R::verdict),
          member_column<E>("Speedup", T::real, &R::speedup),
          member_column<E>("SpeedupCI_Lower", T::real, &R::speedup_ci_lower),
          member_column<E>("SpeedupCI_Upper", T::real, &R::speedup_ci_upper),
          member_column<E>("ReferenceMedianNs", T::real, &R::reference_median_ns),
          member_column<E>("CandidateMedianNs", T::real, &R::candidate_median_ns),
          member_column<E>("Runs", T::integer, &R::runs),
          hidden(member_column<E>("Correct", T::boolean, &R::correct)),
          member_column<E>("MaxAbsError", T::real, &R::max_abs_error),
          member_column<E>("MaxRelError", T::real, &R::max_rel_error),
          hidden(member_column<E>("CheckedRuns", T::integer, &R::checked_runs)),
          hidden(member_column<E>("MismatchedRuns", T::integer, &R::mismatched_runs)),
          hidden(member_column<E>("FailingSeed", T::optional_integer, &R::failing_seed)),
          {"Findings", T::text,
           [](const E&, const R& r) { return Cell{joined_names(r.findings, [](Finding f) { return to_string(f); })}; },
           [](R& r, const Cell& c) { return read_findings(c, r.findings); },
           "comma-separated finding names, each " + finding_choices()},
          member_column<E>("Reason", T::text, &R::reason),
          hidden(member_column<E>("Mismatch", T::text, &R::mismatch)),
          hidden<E, R>({"GPU", T::text,
                        [](const E& e, const R& r) { return Cell{e.measurements().session_of(r.config_index).gpu}; }}),
          hidden<E, R>({"Backend", T::text, [](const E& e, const R& r) {
            return Cell{to_string(e.measurements().session_of(r.config_index).backend)};
          }}),
      },
      0,
      [](const E& e, const R& r) { return config_of(e, r.config_index); }};
  return table;
}

const DerivedColumns<E, FindingRecord>& findings_table() {
  using F = FindingRecord;
  static const DerivedColumns<E, F> table{
      {
          member_column<E>("Side", T::text, &F::side),
          {"Finding", T::text, [](const E&, const F& f) { return Cell{to_string(f.finding)}; },
           [](F& f, const Cell& c) { return read_finding(c, f.finding); }, finding_choices()},
          member_column<E>("Runs", T::integer, &F::runs),
          member_column<E>("Detail", T::text, &F::detail),
      },
      0,
      [](const E& e, const F& f) { return config_of(e, f.config_index); }};
  return table;
}

}  // namespace detail

const std::vector<ColumnSpec>& evaluation_columns() {
  static const std::vector<ColumnSpec> specs = detail::evaluation_table().specs();
  return specs;
}

const std::vector<std::string>& evaluation_view_columns() {
  static const std::vector<std::string> shown = detail::evaluation_table().shown();
  return shown;
}

const std::vector<ColumnSpec>& finding_columns() {
  static const std::vector<ColumnSpec> specs = detail::findings_table().specs();
  return specs;
}

Table Evaluation::table() const { return detail::evaluation_table().table(*this, rows_, measurements_.axis_names()); }

Table Evaluation::findings_table() const {
  return detail::findings_table().table(*this, findings_, measurements_.axis_names());
}

namespace detail {

const std::vector<DerivedFormat<Evaluation>>& evaluation_formats() {
  static const std::vector<DerivedFormat<Evaluation>> formats{
      {"kscope evaluation file (JSON)", kResultsFile,
       [](const Evaluation& e, const std::string& path) { e.write_json(path); }},
  };
  return formats;
}

}  // namespace detail

std::ostream& operator<<(std::ostream& out, const Evaluation& evaluation) {
  const Results& m = evaluation.measurements();
  out << "kscope evaluation: " << detail::session_headline(m.session()) << "\n";
  write_console(detail::evaluation_table().view(evaluation, evaluation.rows(), m.axis_names()), out);
  if (!evaluation.findings().empty()) {
    out << "findings:\n";
    write_console(evaluation.findings_table(), out);
  }
  return out;
}

EvaluationError::EvaluationError(const SweepError& failure, std::shared_ptr<const Evaluation> partial)
    : SweepError(failure.what(), failure.failed_config(), failure.cause(),
                 std::make_shared<const Results>(partial->measurements())),
      partial_(std::move(partial)) {}

EvaluationInterrupted::EvaluationInterrupted(const SweepInterrupted& interrupt,
                                             std::shared_ptr<const Evaluation> partial)
    : SweepInterrupted(interrupt.what(), interrupt.interrupted_config(),
                       std::make_shared<const Results>(partial->measurements())),
      partial_(std::move(partial)) {}

namespace {

// The evaluation on the caller's backend, or (`given` null) on the one the registry chooses.
Evaluation run_evaluation(const Sweep& sweep, const Settings& requested, const Contest& contest,
                          const EvaluateOptions& options, MeasurementBackend* given) {
  detail::Evaluator* evaluator_in_use = nullptr;
  const Body body = [&](const Config& config) { evaluator_in_use->run(config); };
  detail::EntryCall call(detail::Entry::evaluate, sweep, requested, body);
  options.validate();
  check_contest(contest);
  const std::unique_ptr<MeasurementBackend> made = given ? nullptr : call.make(call.chosen());
  MeasurementBackend& backend = given ? *given : *made;
  const Settings& settings = call.settings();
  call.start(backend);
  CallObserver* observer = backend.call_observer();
  if (!observer)
    throw ConfigError("the " + to_string(backend.describe().backend) + " backend cannot evaluate: it does not see "
                      "the work a call causes on every stream, so work moved to another stream would go untimed. "
                      "Evaluate with " + detail::backends_for(detail::entry_rules(detail::Entry::evaluate)));
  // The registry pairs the backend with its device's tensor checks; the backend never sees them.
  const BackendDefinition& measured_by = definition(backend.describe().backend);
  if (!measured_by.tensor_checks)
    throw ConfigError("the " + measured_by.name + " backend cannot evaluate: kscope cannot read the tensors in its "
                      "device's memory (its registry definition has no tensor_checks). Evaluate with " +
                      detail::backends_for(detail::entry_rules(detail::Entry::evaluate)));
  const std::unique_ptr<TensorChecks> device_checks = measured_by.tensor_checks();
  detail::Evaluator evaluator(contest, options, backend, *device_checks, settings.runs, call.configs().size());
  evaluator_in_use = &evaluator;
  observer->observe_calls();
  detail::SessionHooks hooks;
  hooks.kind = detail::ResultKind::evaluation;
  hooks.written_after = detail::derived_prefix_files(detail::evaluation_formats());
  hooks.attribution.empty_range_measures_zero = true;
  hooks.on_run_measured = [&](const RunContext& run, const std::vector<RegionRecord>& regions,
                              const RunMeasurement& measurement) { evaluator.measured(run, regions, measurement); };
  const auto evaluation_of = [&](const Results& measurements) {
    detail::EvaluationReport report = detail::report_evaluation(evaluator.records(), measurements, options);
    return Evaluation(measurements, std::move(report.rows), std::move(report.findings), options);
  };
  Results measurements;
  try {
    measurements = detail::Session(call.take_configs(), settings, body, backend, std::move(hooks)).run();
  } catch (const SweepError& e) {
    if (e.cause()) {
      try {
        std::rethrow_exception(e.cause());
      } catch (const detail::EvaluationRequestError&) {
        throw;
      } catch (...) {  // any other cause: the config failed
      }
    }
    throw EvaluationError(e, std::make_shared<const Evaluation>(evaluation_of(e.partial_results())));
  } catch (const SweepInterrupted& e) {
    throw EvaluationInterrupted(e, std::make_shared<const Evaluation>(evaluation_of(e.partial_results())));
  }
  detail::log_debug(evaluator.time_spent());
  Evaluation evaluation = evaluation_of(measurements);
  if (!settings.output_prefix.empty())
    detail::write_derived_files(evaluation, detail::evaluation_formats(), settings.output_prefix);
  return evaluation;
}

}  // namespace

Evaluation evaluate_with_backend(const Sweep& sweep, const Settings& settings, const Contest& contest,
                                 const EvaluateOptions& options, MeasurementBackend& backend) {
  return run_evaluation(sweep, settings, contest, options, &backend);
}

Evaluation evaluate(const Sweep& sweep, const Settings& settings, const Contest& contest,
                    const EvaluateOptions& options) {
  return run_evaluation(sweep, settings, contest, options, nullptr);
}

}  // namespace kscope

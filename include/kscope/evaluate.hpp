#pragma once
// Is a candidate kernel really faster than the reference it replaces? evaluate() runs both on fresh
// inputs every run, in interleaved pairs (candidate, then reference), times each call over all the
// GPU work it caused (kernels, copies and fills, on any stream, from any thread, including work
// still running after it returned), checks the candidate's outputs against the reference's, looks
// for the ways a timing harness is known to be fooled, and gives one verdict per config.
//
//   kscope::Contest contest;
//   contest.inputs = [&](const kscope::Config& c, std::uint64_t seed) { return make_inputs(c, seed); };
//   contest.reference = [&](const kscope::Tensors& in) { return run_reference(in); };
//   contest.candidate = [&](const kscope::Tensors& in) { return run_candidate(in); };
//   kscope::Evaluation e = kscope::evaluate(sweep, settings, contest);
//   std::cout << e;   // per config: Verdict, Speedup [CI], errors, findings
//
// docs/evaluate.md catalogues each Finding with the attack it stops and the test that shows it.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "kscope/columns.hpp"
#include "kscope/config.hpp"
#include "kscope/errors.hpp"
#include "kscope/results.hpp"
#include "kscope/settings.hpp"
#include "kscope/sweep.hpp"
#include "kscope/table.hpp"
#include "kscope/tensor.hpp"

namespace kscope {

class MeasurementBackend;

// What an evaluation saw that a fair measurement of a correct kernel does not do.
enum class Finding {
  unjoined_work,                  // on another stream, still running at the call's end or never waited for by the caller's stream
  work_after_return,              // GPU work launched after the call returned, or outputs that changed after it
  varying_work,                   // the kernels, copies and fills of a call differ between runs of one config
  varying_time,                   // some runs' GPU work takes several times longer or shorter than the median, unlike the reference's
  no_work,                        // a call caused no GPU work at all
  output_aliases_input,           // an output shares memory with an input (where the reference's does not)
  output_aliases_earlier_output,  // an output shares memory with an earlier run's output, still held
  output_aliases_reference,       // a candidate's output shares memory with a reference's output
  input_mutated,                  // the inputs differ after the call from the reference's copy after its call
  output_not_plain,               // an output is not a plain tensor or array (a subclass, a lazy object)
  timer_patched,                  // a timing function of the process was replaced
  persisting_l2,                  // a persisting-L2 carve-out or access-policy window was set
  implausible_speed,              // faster than the device's DRAM or compute roof allows for the declared work
};
std::string to_string(Finding finding);  // the enumerator's name: "unjoined_work"
std::optional<Finding> finding_named(const std::string& name);
const std::vector<Finding>& all_findings();
// One sentence: what the finding means.
std::string describe(Finding finding);
// One sentence: the attack on a timing harness it stops.
std::string attack_stopped(Finding finding);

// Something seen about one call; a front end reports those only it can see (a Python output's type).
struct Observation {
  Finding finding;  // what was seen
  std::string detail;  // in words
};

// Tensors a function takes or returns, and what keeps their memory alive while kscope holds them:
// kscope keeps `owner` until it is done with the views (outputs: until the next run of the config
// has been checked, so an output that aliases an earlier one is seen as such).
struct Tensors {
  std::vector<TensorView> views;  // the tensors, in order
  std::shared_ptr<const void> owner;   // nullptr: the caller keeps the memory alive itself
  std::vector<Observation> observed;   // what the front end saw of this call (outputs only)
  // Outputs only, optional: each view's name, such as "output['attn']" or "output[0]". Where both
  // sides name their outputs, the candidate's are paired with the reference's by name, whatever
  // their order, and messages call them by it; else by position, as "output 0", "output 1"...
  std::vector<std::string> names;
};

enum class Side { candidate, reference };
std::string to_string(Side side);  // "candidate", "reference"

// The two functions and their inputs.
struct Contest {
  // One run's inputs from a seed; the same seed must give the same values (kscope checks). Called
  // for the candidate's copy each run, outside the timed calls, and again for the reference's
  // after the candidate's call in the runs whose tensors are read (each config's first run among
  // them, which checks that one seed gives the same values); the other runs' reference is given
  // the candidate's. Each run of each config gets its own seed (EvaluateOptions::seed says how).
  std::function<Tensors(const Config& config, std::uint64_t seed)> inputs;
  // Each is called on the inputs of its side and returns its outputs.
  std::function<Tensors(const Tensors& inputs)> reference;
  std::function<Tensors(const Tensors& inputs)> candidate;  // the kernel under test
  // The stream a caller of the functions waits on for their outputs (a cudaStream_t as an integer;
  // 0, the default: the legacy default stream). Asked after each call returns.
  std::function<std::uintptr_t()> caller_stream;
};

// Per-dtype defaults of EvaluateOptions::rtol: float64 1e-9, float32 1e-4, float16 5e-3,
// bfloat16 4e-2, float8_e4m3fn 1.25e-1, float8_e5m2 2.5e-1; 0 (exact) for integers and bool.
double default_rtol(DType dtype);

// How the outputs are judged and the speedup decided. An output element passes when
// |candidate - reference| <= atol + rtol * |reference| (NaN matching NaN; an infinity or the
// dtype's largest finite magnitude, a mask's fill, only the same value); the shapes, dtypes and
// number of outputs must be the reference's.
struct EvaluateOptions {
  std::optional<double> rtol;  // every output; default_rtol(its dtype) when unset
  // Every output; when unset, rtol times the reference output's typical magnitude (the median
  // magnitude of its finite, nonzero elements other than the extremes), so that elements near zero
  // are judged at the output's own scale rather than by an absolute number, and neither masked
  // elements, nor padding, nor a few large elements change that scale.
  std::optional<double> atol;
  // A speedup whose whole interval lies beyond 1 + threshold_pct/100 (or below its inverse) is
  // faster (slower); anything else is same.
  double threshold_pct = 2.0;
  double confidence = 0.95;  // of the speedup's interval
  // Run r of config c gets seed_of(seed, c, r): a different value every run, so that results
  // cached by input address or content, precomputed answers and replayed graphs come out wrong.
  std::uint64_t seed = 0;
  // How many of each config's recorded runs have their outputs and inputs read (compared with the
  // reference's, checksummed), besides every warm-up run, which always is: a random subset drawn
  // from the operating system's entropy per config, which nothing the candidate sees before its
  // call returns depends on. 0, or at least the recorded runs: every run. What the others skip and
  // the chance that each kind of trick is still caught: docs/evaluate.md, "Checked runs".
  std::size_t checked_runs = 8;

  // Throws ConfigError naming the bad option, its value and what it accepts.
  void validate() const;
};

// The seed of a run: a mix of the three, below 2^31 so that every random number generator takes it.
std::uint64_t seed_of(std::uint64_t seed, std::size_t config_index, std::size_t run);

enum class EvaluationVerdict {
  faster,     // correct, no finding, and the whole speedup interval above 1 + threshold
  slower,     // correct, no finding, and the whole interval below 1 / (1 + threshold)
  same,       // correct, no finding, and no difference shown (a tie, or too noisy: Reason says which)
  incorrect,  // an output outside the tolerance (or of another shape, dtype, count), or a candidate that raised
  suspect,    // correct, but a Finding says the timing or the outputs cannot be trusted
};
std::string to_string(EvaluationVerdict verdict);

// One config's evaluation.
struct EvaluationRow {
  std::size_t config_index = 0;  // into the sweep's configs
  std::size_t runs = 0;                // recorded pairs of runs with both durations
  double reference_median_ns = NAN;    // over the recorded runs
  double candidate_median_ns = NAN;  // over the recorded runs
  // The median over the recorded runs of reference time / candidate time of the same run, and its
  // distribution-free interval (order statistics of the ratios) at EvaluateOptions::confidence or
  // the nearest coverage above it; NaN bounds when the runs are too few to reach it.
  double speedup = NAN;
  double speedup_ci_lower = NAN;  // lower bound of the speedup's interval
  double speedup_ci_upper = NAN;  // upper bound of the speedup's interval
  bool correct = true;  // no checked run failed (mismatch says how the first one did)
  double max_abs_error = NAN;          // over every checked run and output element
  double max_rel_error = NAN;          // |c - r| / max(|r|, atol / rtol): relative, judged at atol's scale near zero
  std::size_t checked_runs = 0;        // runs whose outputs were compared (warm-ups included)
  std::size_t mismatched_runs = 0;  // runs with an output outside its tolerance
  std::optional<std::uint64_t> failing_seed;  // the first failing run's seed, to make its inputs again
  std::string mismatch;                // the first failure, in words
  std::vector<Finding> findings;       // every finding of either side, in Finding order
  EvaluationVerdict verdict = EvaluationVerdict::same;  // faster, slower, same, incorrect or suspect
  std::string reason;                  // one line: why this verdict, with the numbers that decided it
};

// A finding at one config.
struct FindingRecord {
  std::size_t config_index = 0;  // into the sweep's configs
  Side side = Side::candidate;  // whose call it was seen in
  Finding finding = Finding::no_work;  // what was seen
  std::size_t runs = 0;  // the runs it was seen in
  std::string detail;    // the first time it was seen ("run 3: ..."), in words
};

// What evaluate() returns: per config, whether the candidate is correct and faster, with the
// findings and both sides' measurements.
class Evaluation {
 public:
  Evaluation() = default;
  // Made by evaluate() and load_evaluation().
  Evaluation(Results measurements, std::vector<EvaluationRow> rows, std::vector<FindingRecord> findings,
             EvaluateOptions options);

  // The durations of both sides: annotations "candidate" and "reference", one sample per run.
  const Results& measurements() const { return measurements_; }
  const std::vector<EvaluationRow>& rows() const { return rows_; }          // one per config
  const std::vector<FindingRecord>& findings() const { return findings_; }  // one per finding and config
  const EvaluateOptions& options() const { return options_; }               // as evaluate() was given them

  // One row per config: the axes, then evaluation_columns().
  Table table() const;
  // One row per finding: the axes, then finding_columns().
  Table findings_table() const;
  // kscope's results file (load_results reads its measurements) with an "evaluation" section.
  void write_json(const std::string& path) const;
  void write_json(std::ostream& out) const;  // the same, to a stream

 private:
  Results measurements_;
  std::vector<EvaluationRow> rows_;
  std::vector<FindingRecord> findings_;
  EvaluateOptions options_;
};

// The columns of Evaluation::table() after the config axes: Verdict, Speedup, SpeedupCI_Lower,
// SpeedupCI_Upper, ReferenceMedianNs, CandidateMedianNs, Runs, Correct, MaxAbsError, MaxRelError,
// CheckedRuns, MismatchedRuns, FailingSeed, Findings, Reason, Mismatch, and the session's GPU and
// Backend.
const std::vector<ColumnSpec>& evaluation_columns();
// The names of those the readable view shows after the axes (operator<<, Python's str() and
// Jupyter's view): what decides a verdict. The table and its files hold them all.
const std::vector<std::string>& evaluation_view_columns();
// The columns of Evaluation::findings_table() after the config axes: Side, Finding, Runs, Detail.
const std::vector<ColumnSpec>& finding_columns();

std::ostream& operator<<(std::ostream& out, const Evaluation& evaluation);

// Reads a file written by Evaluation::write_json; ConfigError when it holds no evaluation.
Evaluation load_evaluation(const std::string& path);
Evaluation load_evaluation(std::istream& in, const std::string& name);

// Evaluates the candidate against the reference over the sweep's configs. `settings` are the
// measurement's (runs, warmup_runs, cache_control, clock_control, backend, work, output_prefix,
// verbosity, thermal guard); every region is measured as a range (replay_mode is set to range),
// and options that would hide work are refused (metrics, ignore_kernel_list, combine_kernel_metrics,
// derive_metric, normalize_against, resume, shard). The backend must see every stream (cupti, the
// default; events and the counter backends cannot). A candidate that raises makes its config
// incorrect; a reference or inputs function that raises stops the evaluation with an
// EvaluationError that names it ("in Contest::reference: ...") holding the configs evaluated so far.
Evaluation evaluate(const Sweep& sweep, const Settings& settings, const Contest& contest,
                    const EvaluateOptions& options = {});
// The same on a backend supplied by the caller: kscope::testing::SimulatedBackend for tests.
Evaluation evaluate_with_backend(const Sweep& sweep, const Settings& settings, const Contest& contest,
                                 const EvaluateOptions& options, MeasurementBackend& backend);

// evaluate() stopped by a failing config: the SweepError, with the evaluation of the configs before it.
class EvaluationError : public SweepError {
 public:
  // The failure, and the evaluation of the configs before it.
  EvaluationError(const SweepError& failure, std::shared_ptr<const Evaluation> partial);
  const Evaluation& partial_evaluation() const { return *partial_; }  // the configs evaluated before

 private:
  std::shared_ptr<const Evaluation> partial_;
};

// evaluate() stopped by Ctrl-C: the SweepInterrupted, with the evaluation of the configs before it.
class EvaluationInterrupted : public SweepInterrupted {
 public:
  // The interrupt, and the evaluation of the configs before it.
  EvaluationInterrupted(const SweepInterrupted& interrupt, std::shared_ptr<const Evaluation> partial);
  const Evaluation& partial_evaluation() const { return *partial_; }  // the configs evaluated before

 private:
  std::shared_ptr<const Evaluation> partial_;
};

}  // namespace kscope

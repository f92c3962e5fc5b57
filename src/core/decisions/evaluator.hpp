#pragma once
// evaluate()'s part of a session (kscope/evaluate.hpp): the body, which runs one pair of calls per
// run on fresh inputs (the candidate, then the reference, each in its own region; the candidate's
// closes only once the GPU has drained) and checks them outside the timed regions; and what each run
// showed, from which core/decisions/evaluation_report.* makes the verdicts.
//
// The candidate always runs first: memory the reference used and freed for this run's inputs (its
// answer, still there) must never be handed to the candidate by an allocator.
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/decisions/checks_by_memory.hpp"
#include "kscope/errors.hpp"
#include "kscope/evaluate.hpp"
#include "kscope/measurement_backend.hpp"

namespace kscope::detail {

class RunRecorder;

// A request evaluate() cannot carry out, found while it runs (inputs that ignore their seed): raised
// to the caller as the ConfigError it is, not as a failed config.
class EvaluationRequestError : public ConfigError {
 public:
  using ConfigError::ConfigError;
};

constexpr std::size_t index_of(Side side) { return side == Side::candidate ? 0 : 1; }
constexpr std::array<Side, 2> kSides{Side::candidate, Side::reference};

// What one call caused on the GPU, as its region's measurement shows.
struct CallActivity {
  bool measured = false;
  std::vector<std::string> names;  // its activities (kernels, copies, fills), sorted
  double busy_ns = 0;              // the sum of their durations
  std::size_t launched_after_return = 0;
  std::size_t unjoined = 0;
  std::string first_unjoined;      // the first unjoined activity's name
};

// What one run of a config showed.
struct RunRecord {
  std::size_t run = 0;  // in the config, warm-ups included
  bool recorded = false;
  std::string label;    // "warm-up run 1", "run 3" (recorded runs counted from 1)
  std::uint64_t seed = 0;
  std::array<CallActivity, 2> activity;              // by index_of(side)
  std::array<std::vector<Observation>, 2> observed;  // what the checks saw, by index_of(side)
  bool checked = false;   // the outputs were compared (or the candidate raised)
  bool candidate_raised = false;
  std::string failure;    // why the candidate's outputs are wrong; empty when they are right
  double max_abs_error = 0;
  double max_rel_error = 0;
};

class Evaluator {
 public:
  // `device_checks` read the tensors in the memory of the device `backend` measures; each config has
  // `recorded_runs` recorded runs (Settings::runs), of which options.checked_runs are read.
  Evaluator(const Contest& contest, const EvaluateOptions& options, MeasurementBackend& backend,
            TensorChecks& device_checks, std::size_t recorded_runs, std::size_t configs);

  // The session's body: one run.
  void run(const Config& config);
  // The session's hook: a run's measurement, before attribution (warm-ups too).
  void measured(const RunContext& run, const std::vector<RegionRecord>& regions, const RunMeasurement& measurement);

  // Per config, the records of its runs, in run order.
  const std::vector<std::vector<RunRecord>>& records() const { return records_; }
  // Where the evaluation's host time went, in words, for the debug log.
  std::string time_spent() const;

 private:
  struct Call {
    Tensors outputs;
    std::string raised;  // the candidate's exception, in words
    std::string persisting_l2;
  };

  RunRecord& record_of(std::size_t config, const RunContext& run);
  Tensors make_inputs(const Config& config, std::uint64_t seed, const char* whose);
  // Refuses inputs that point at no memory.
  Tensors checked_inputs(Tensors made, const char* whose);
  // The same seed gave the same inputs, as their checksums before the candidate's call and the
  // reference's copy show (a config's first run).
  void check_same_inputs(const Config& config, const Tensors& candidate,
                         const std::vector<std::uint64_t>& candidate_checksums, const Tensors& reference);
  // Another seed gave other inputs (a config's second run).
  void check_fresh_inputs(const Config& config, const std::vector<std::uint64_t>& candidate_checksums);
  // Draws the recorded runs of a new config whose tensors are read (EvaluateOptions::checked_runs).
  void draw_checked_runs();
  // Whether this run's outputs and inputs are read: every warm-up run, and the drawn recorded ones.
  bool reads_tensors(const RunContext& run) const;
  // `read`: the outputs' checksums are started as the call's region closes.
  Call call(Side side, const Tensors& inputs, RunRecorder& recorder, bool read);
  // `read`: the outputs are compared and the tensors checksummed; else only what needs no reading
  // (the findings of the calls, aliasing) is checked.
  void check(RunRecord& record, const std::array<Tensors, 2>& inputs, const std::array<Call, 2>& calls, bool read);
  void compare_outputs(RunRecord& record, const Tensors& candidate, const Tensors& reference);
  // For each reference output, the candidate's of the same name (or position, where a side names
  // none); nullopt, with the record's failure saying why, where the two do not pair up.
  std::optional<std::vector<std::size_t>> paired_outputs(RunRecord& record, const Tensors& candidate,
                                                         const Tensors& reference);
  // `shared_inputs`: both sides were given the same inputs (a run whose tensors are not read).
  void check_aliasing(RunRecord& record, const std::array<Tensors, 2>& inputs, const std::array<Call, 2>& calls,
                      bool shared_inputs);
  std::vector<std::uint64_t> checksums(const Tensors& tensors);

  // Host seconds per phase of a run, summed over the runs (what evaluate costs beyond the calls).
  struct PhaseTimes {
    double inputs = 0;        // the inputs function for both sides, the input checks
    double input_checks = 0;  // of which the input checks (a config's first two runs)
    double region_open = 0;   // the call's region opening: the L2 flush's launch
    double functions = 0;     // the two functions themselves
    double drain = 0;         // waiting for the GPU after the candidate (and the reference, in read runs)
    double after_call = 0;    // the persisting-L2 read and the outputs' checksums after each call
    double checks = 0;        // comparison, checksums and aliasing after both calls
  };

  const Contest& contest_;
  const EvaluateOptions& options_;
  MeasurementBackend& backend_;
  CallObserver& observer_;
  ChecksByMemory checks_;
  std::size_t recorded_runs_;
  // Per recorded run of the current config, whether its tensors are read; empty: every run's are.
  std::vector<bool> checked_;
  std::vector<std::vector<RunRecord>> records_;
  // The config's previous run: its outputs, held so that an output aliasing one of them is one,
  // and its first inputs' checksums.
  std::array<Tensors, 2> previous_outputs_;
  std::vector<std::uint64_t> first_input_checksums_;
  PhaseTimes time_;
};

}  // namespace kscope::detail

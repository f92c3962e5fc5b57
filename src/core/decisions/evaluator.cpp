#include "core/decisions/evaluator.hpp"

#include <algorithm>
#include <cmath>
#include <exception>
#include <map>
#include <numeric>
#include <optional>
#include <random>
#include <set>
#include <utility>

#include "base/elapsed.hpp"
#include "base/text.hpp"
#include "core/model/attribution.hpp"
#include "core/model/caller_language.hpp"
#include "core/model/exception_message.hpp"
#include "core/model/interrupt_scope.hpp"
#include "core/engine/run_recorder.hpp"
#include "core/model/suggest.hpp"
#include "kscope/annotation.hpp"
#include "kscope/errors.hpp"

namespace kscope::detail {
namespace {

std::string shape_text(const TensorView& v) {
  std::string dims;
  for (std::int64_t d : v.shape) dims += (dims.empty() ? "" : ", ") + std::to_string(d);
  return "[" + dims + "]";
}

std::string memory_text(MemorySpace m) { return m == MemorySpace::device ? "device memory" : "host memory"; }

// How messages call output i: by its name where the function named its outputs, else "output i".
std::string output_label(const Tensors& outputs, std::size_t i) {
  return i < outputs.names.size() ? cut(outputs.names[i]) : "output " + std::to_string(i);
}

// "a", "a and b", "a, b and c": the names a message lists, at most five, then how many more.
std::string spoken_list(const std::vector<std::string>& names) {
  constexpr std::size_t kShown = 5;
  std::string out;
  const std::size_t shown = std::min(names.size(), kShown);
  for (std::size_t i = 0; i < shown; ++i) {
    const bool last = i + 1 == shown && names.size() <= kShown;
    out += (i == 0 ? "" : last ? " and " : ", ") + cut(names[i]);
  }
  if (names.size() > kShown) out += " and " + std::to_string(names.size() - kShown) + " more";
  return out;
}

// One of the caller's functions, by the name messages give it: what it throws names it.
template <class Call>
Tensors called(const std::string& name, Call&& call) {
  try {
    return call();
  } catch (...) {
    if (interrupt_requested()) throw;  // Ctrl-C stops the evaluation as interrupted, not failed
    throw CallbackFailure(name, std::current_exception());
  }
}

CallObserver& observer_of(MeasurementBackend& backend) {
  CallObserver* observer = backend.call_observer();
  if (!observer)
    throw InternalError("the evaluator was given a backend without a call observer (kscope bug: please report it "
                        "with this message)");
  return *observer;
}

}  // namespace

Evaluator::Evaluator(const Contest& contest, const EvaluateOptions& options, MeasurementBackend& backend,
                     TensorChecks& device_checks, std::size_t recorded_runs, std::size_t configs)
    : contest_(contest),
      options_(options),
      backend_(backend),
      observer_(observer_of(backend)),
      checks_(device_checks),
      recorded_runs_(recorded_runs),
      records_(configs) {}

RunRecord& Evaluator::record_of(std::size_t config, const RunContext& run) {
  std::vector<RunRecord>& runs = records_.at(config);
  if (runs.size() <= run.run) runs.resize(run.run + 1);
  RunRecord& record = runs[run.run];
  record.run = run.run;
  record.recorded = run.recorded;
  return record;
}

void Evaluator::run(const Config& config) {
  RunRecorder* recorder = active_recorder();
  if (!recorder) throw InternalError("the evaluator's body ran outside a session (kscope bug: please report it)");
  const RunContext context = recorder->run();
  RunRecord& record = record_of(config.index(), context);
  record = RunRecord{context.run, context.recorded,
                     context.recorded ? "run " + std::to_string(context.recorded_run + 1)
                                      : "warm-up run " + std::to_string(context.run + 1),
                     seed_of(options_.seed, config.index(), context.run)};
  if (context.run == 0) {  // a new config: nothing of the last one is compared
    previous_outputs_ = {};
    draw_checked_runs();
  }
  checks_.finish_checksums();  // none, unless a run failed between its calls and its checks
  const bool read = reads_tensors(context);

  std::array<Tensors, 2> inputs;
  std::array<Call, 2> calls;
  Tensors& mine = inputs[index_of(Side::candidate)];
  Tensors& theirs = inputs[index_of(Side::reference)];
  std::vector<std::uint64_t> first_checksums;
  {
    TimeInto timed(time_.inputs);
    mine = make_inputs(config, record.seed, "the candidate's");
    if (context.run <= 1) {
      TimeInto checking(time_.input_checks);
      first_checksums = checksums(mine);  // before the candidate can change them
      if (context.run == 1) check_fresh_inputs(config, first_checksums);
    }
  }
  calls[index_of(Side::candidate)] = call(Side::candidate, mine, *recorder, read);
  {
    TimeInto timed(time_.inputs);
    // A read run's reference gets inputs of its own, made from the seed now that the candidate has
    // returned: before that, nothing tells the candidate whether its run is read. The other runs'
    // reference takes the candidate's inputs; what the candidate did to them, read runs find
    // (input_mutated).
    theirs = read ? make_inputs(config, record.seed, "the reference's") : mine;
    if (context.run == 0) {
      TimeInto checking(time_.input_checks);
      check_same_inputs(config, mine, first_checksums, theirs);
    }
  }
  calls[index_of(Side::reference)] = call(Side::reference, theirs, *recorder, read);
  {
    TimeInto timed(time_.checks);
    check(record, inputs, calls, read);
  }
  for (Side side : kSides) previous_outputs_[index_of(side)] = std::move(calls[index_of(side)].outputs);
}

void Evaluator::draw_checked_runs() {
  checked_.clear();
  const std::size_t read = options_.checked_runs;
  if (read == 0 || read >= recorded_runs_) return;
  // A uniform subset from the operating system's entropy: no seed the candidate could learn or
  // replay, and nothing it sees before its call returns differs between read and unread runs.
  std::vector<std::size_t> order(recorded_runs_);
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::random_device entropy;
  std::shuffle(order.begin(), order.end(), entropy);
  checked_.assign(recorded_runs_, false);
  for (std::size_t k = 0; k < read; ++k) checked_[order[k]] = true;
}

bool Evaluator::reads_tensors(const RunContext& run) const {
  // Runs beyond those drawn for (a stopping rule's) are read, as warm-ups are.
  return !run.recorded || run.recorded_run >= checked_.size() || checked_[run.recorded_run];
}

Tensors Evaluator::make_inputs(const Config& config, std::uint64_t seed, const char* whose) {
  return checked_inputs(
      called(spell("Contest::inputs", "inputs(config, seed)"), [&] { return contest_.inputs(config, seed); }), whose);
}

Tensors Evaluator::checked_inputs(Tensors made, const char* whose) {
  for (std::size_t i = 0; i < made.views.size(); ++i)
    if (made.views[i].data == nullptr && made.views[i].elements() > 0)
      throw EvaluationRequestError(std::string("the inputs function gave ") + whose + " input " + std::to_string(i) +
                        " without memory (a null pointer for " + std::to_string(made.views[i].elements()) +
                        " elements): each input must point at its elements");
  return made;
}

std::vector<std::uint64_t> Evaluator::checksums(const Tensors& tensors) { return checks_.checksums(tensors.views); }

void Evaluator::check_same_inputs(const Config& config, const Tensors& candidate,
                                  const std::vector<std::uint64_t>& candidate_checksums, const Tensors& reference) {
  const std::vector<TensorView>& mine = candidate.views;
  bool same = mine.size() == reference.views.size();
  for (std::size_t i = 0; same && i < mine.size(); ++i)
    same = mine[i].dtype == reference.views[i].dtype && mine[i].shape == reference.views[i].shape;
  if (!same || candidate_checksums != checksums(reference))
    throw EvaluationRequestError("the inputs function gave different inputs for the same seed (" + cut(config.to_string()) +
                                 "): the candidate and the reference must get the same values, so it must make them "
                                 "from the seed alone (a random generator seeded with it)");
  first_input_checksums_ = candidate_checksums;
}

void Evaluator::check_fresh_inputs(const Config& config, const std::vector<std::uint64_t>& candidate_checksums) {
  if (!candidate_checksums.empty() && candidate_checksums == first_input_checksums_)
    throw EvaluationRequestError("the inputs function gave the same inputs for two different seeds (" + cut(config.to_string()) +
                                 "): each run must get fresh values, or a candidate that caches its answers or replays "
                                 "a recorded graph passes as correct. Make the inputs from the seed (seed a random "
                                 "generator with it)");
}

Evaluator::Call Evaluator::call(Side side, const Tensors& inputs, RunRecorder& recorder, bool read) {
  Call c;
  const auto& function = side == Side::candidate ? contest_.candidate : contest_.reference;
  std::uintptr_t stream = 0;
  {
    std::optional<TimeInto> timed(time_.region_open);
    Annotation region(to_string(side));
    timed.emplace(time_.functions);
    try {
      c.outputs = function(inputs);
    } catch (...) {
      // A failing candidate is an incorrect one; a failing reference (or Ctrl-C) stops the evaluation.
      if (interrupt_requested()) throw;
      if (side == Side::reference) {
        // A reference that fails on the candidate's inputs (an unread run) may fail for what the candidate did to them.
        std::string who = spell("Contest::reference", "the reference");
        if (!read) who += " (given the candidate's inputs after its call, which may have changed them)";
        throw CallbackFailure(who, std::current_exception());
      }
      c.raised = exception_message(std::current_exception());
      region.mark_failed("the candidate raised " + c.raised);
    }
    stream = contest_.caller_stream ? contest_.caller_stream() : 0;
    timed.emplace(time_.drain);
    recorder.call_returned(stream);
    // The candidate's region closes only once the GPU has drained, so that it holds all the work
    // the call caused, a thread's still launching included; the reference's only where its outputs'
    // checksums start as it closes.
    if (side == Side::candidate || read) backend_.synchronize();
  }
  TimeInto timed(time_.after_call);
  c.persisting_l2 = observer_.take_persisting_l2(stream);
  if (read) checks_.start_checksums(c.outputs.views);  // read in check(), after both calls
  return c;
}

void Evaluator::check(RunRecord& record, const std::array<Tensors, 2>& inputs, const std::array<Call, 2>& calls,
                      bool read) {
  const Call& candidate = calls[index_of(Side::candidate)];
  const Call& reference = calls[index_of(Side::reference)];
  // Each call's outputs were checksummed as its region closed (started then, not waited for); now
  // both sides' outputs again, then their inputs after both calls. All are read after the
  // comparison, whose waits for the GPU they share.
  std::vector<std::uint64_t> sums;
  if (read) {
    std::vector<TensorView> batch;
    for (Side side : kSides) {
      const auto& v = calls[index_of(side)].outputs.views;
      batch.insert(batch.end(), v.begin(), v.end());
    }
    for (Side side : kSides) {
      const auto& v = inputs[index_of(side)].views;
      batch.insert(batch.end(), v.begin(), v.end());
    }
    checks_.start_checksums(batch);
    if (!reference.outputs.views.empty() && candidate.raised.empty())
      compare_outputs(record, candidate.outputs, reference.outputs);
    sums = checks_.finish_checksums();
  }

  std::size_t at_close = 0, next = candidate.outputs.views.size() + reference.outputs.views.size();
  for (Side side : kSides) {
    const Call& c = calls[index_of(side)];
    std::vector<Observation>& seen = record.observed[index_of(side)];
    seen.insert(seen.end(), c.outputs.observed.begin(), c.outputs.observed.end());
    if (!c.persisting_l2.empty()) seen.push_back({Finding::persisting_l2, c.persisting_l2});
    if (!read) continue;
    bool changed = false;
    for (std::size_t i = 0; i < c.outputs.views.size(); ++i, ++at_close, ++next) {
      if (changed || sums[next] == sums[at_close]) continue;
      changed = true;
      seen.push_back({Finding::work_after_return,
                      output_label(c.outputs, i) + " changed after the call returned and the GPU drained (a "
                      "thread or stream still writing it)"});
    }
  }

  record.checked = read || !candidate.raised.empty();
  if (reference.outputs.views.empty())
    throw EvaluationRequestError("the reference returned no tensor: evaluate compares the candidate's outputs with "
                                 "the reference's, so both must return their outputs");
  if (!candidate.raised.empty()) {
    record.candidate_raised = true;
    record.failure = "the candidate raised " + candidate.raised;
    return;
  }
  check_aliasing(record, inputs, calls, !read);
  if (!read) return;
  const std::size_t my_inputs = inputs[index_of(Side::candidate)].views.size();
  const std::vector<std::uint64_t> mine(sums.begin() + static_cast<std::ptrdiff_t>(next),
                                        sums.begin() + static_cast<std::ptrdiff_t>(next + my_inputs));
  const std::vector<std::uint64_t> theirs(sums.begin() + static_cast<std::ptrdiff_t>(next + my_inputs), sums.end());
  for (std::size_t i = 0; i < mine.size() && i < theirs.size(); ++i)
    if (mine[i] != theirs[i]) {
      record.observed[index_of(Side::candidate)].push_back(
          {Finding::input_mutated, "input " + std::to_string(i) + " differs after the call from the reference's copy "
                                   "after its call"});
      break;
    }
}

std::optional<std::vector<std::size_t>> Evaluator::paired_outputs(RunRecord& record, const Tensors& candidate,
                                                                   const Tensors& reference) {
  const std::size_t mine = candidate.views.size(), theirs = reference.views.size();
  const std::string counts = "the candidate returned " + std::to_string(mine) + " outputs, the reference " +
                             std::to_string(theirs);
  const auto fail = [&](const std::string& why) {
    if (record.failure.empty()) record.failure = why;
    return std::nullopt;
  };
  std::vector<std::size_t> partner(theirs);
  if (candidate.names.size() != mine || reference.names.size() != theirs) {  // unnamed: by position
    if (mine != theirs) return fail(counts);
    for (std::size_t i = 0; i < theirs; ++i) partner[i] = i;
    return partner;
  }
  std::map<std::string, std::size_t> by_name;
  for (std::size_t i = 0; i < mine; ++i) by_name.emplace(candidate.names[i], i);
  const std::set<std::string> reference_names(reference.names.begin(), reference.names.end());
  std::vector<std::string> lacked, extra;
  for (std::size_t i = 0; i < theirs; ++i) {
    const auto found = by_name.find(reference.names[i]);
    if (found == by_name.end()) lacked.push_back(reference.names[i]);
    else partner[i] = found->second;
  }
  for (const std::string& name : candidate.names)
    if (!reference_names.count(name)) extra.push_back(name);
  if (lacked.empty() && extra.empty() && mine == theirs) return partner;
  std::string why = (mine == theirs ? "the candidate's outputs are not named as the reference's" : counts) + ":";
  if (!lacked.empty()) why += " it lacks " + spoken_list(lacked);
  if (!extra.empty())
    why += std::string(lacked.empty() ? " it" : ", and") + " returns " + spoken_list(extra) +
           ", which the reference does not return";
  return fail(why);
}

void Evaluator::compare_outputs(RunRecord& record, const Tensors& candidate, const Tensors& reference) {
  const auto fail = [&](std::string why) {
    if (record.failure.empty()) record.failure = std::move(why);
  };
  const std::optional<std::vector<std::size_t>> partner = paired_outputs(record, candidate, reference);
  if (!partner) return;
  // The outputs alike in dtype, shape and memory are compared, in one batch.
  std::vector<std::size_t> compared;
  std::vector<TensorView> mine, theirs;
  for (std::size_t i = 0; i < reference.views.size(); ++i) {
    const TensorView& c = candidate.views[(*partner)[i]];
    const TensorView& r = reference.views[i];
    const std::string output = output_label(reference, i);
    if (c.dtype != r.dtype) {
      fail(output + " is " + to_string(c.dtype) + ", the reference's " + to_string(r.dtype));
    } else if (c.shape != r.shape) {
      fail(output + " has shape " + shape_text(c) + ", the reference's " + shape_text(r));
    } else if (c.memory != r.memory) {
      fail(output + " is in " + memory_text(c.memory) + ", the reference's in " + memory_text(r.memory));
    } else if (c.elements() > 0 && c.data == nullptr) {
      fail(output + " points at no memory (a null pointer)");
    } else {
      compared.push_back(i);
      mine.push_back(c);
      theirs.push_back(r);
    }
  }
  std::vector<Tolerance> tolerances;
  for (const TensorView& r : theirs)  // atol's default: rtol times the reference's typical magnitude
    tolerances.push_back({options_.atol.value_or(0), options_.rtol.value_or(default_rtol(r.dtype)), !options_.atol});
  const std::vector<TensorComparison> results = checks_.compare(mine, theirs, tolerances);
  for (std::size_t k = 0; k < results.size(); ++k) {
    const TensorComparison& result = results[k];
    record.max_abs_error = std::fmax(record.max_abs_error, result.max_abs_error);
    record.max_rel_error = std::fmax(record.max_rel_error, result.max_rel_error);
    if (result.mismatched > 0)
      fail(output_label(reference, compared[k]) + ": " + std::to_string(result.mismatched) + " of " +
           std::to_string(result.elements) + " elements outside |candidate - reference| <= atol + rtol * |reference| "
           "(atol " + number_text(result.atol) + ", rtol " + number_text(tolerances[k].rtol) + "); the first, element " +
           std::to_string(result.first_mismatch) + ", is " + number_text(result.first_candidate) + " against " +
           number_text(result.first_reference));
  }
}

void Evaluator::check_aliasing(RunRecord& record, const std::array<Tensors, 2>& inputs,
                               const std::array<Call, 2>& calls, bool shared_inputs) {
  const Tensors& candidate = calls[index_of(Side::candidate)].outputs;
  const Tensors& reference = calls[index_of(Side::reference)].outputs;
  const std::vector<TensorView>& outputs = candidate.views;
  const std::vector<TensorView>& reference_outputs = reference.views;
  const std::vector<TensorView>& my_inputs = inputs[index_of(Side::candidate)].views;
  const std::vector<TensorView>& reference_inputs = inputs[index_of(Side::reference)].views;
  std::vector<Observation>& seen = record.observed[index_of(Side::candidate)];
  const auto any_overlap = [](const TensorView& v, const std::vector<TensorView>& others) -> std::ptrdiff_t {
    for (std::size_t k = 0; k < others.size(); ++k)
      if (overlaps(v, others[k])) return static_cast<std::ptrdiff_t>(k);
    return -1;
  };
  // The reference's output paired with the candidate's output i: of the same name, or position.
  const auto reference_output = [&](std::size_t i) -> std::size_t {
    if (i >= candidate.names.size() || reference.names.size() != reference_outputs.size()) return i;
    const auto named = std::find(reference.names.begin(), reference.names.end(), candidate.names[i]);
    return static_cast<std::size_t>(named - reference.names.begin());  // past the end where none is
  };
  // The reference's outputs of this run, but for those in inputs both sides were given (an in-place
  // reference's, in a run whose inputs are shared): an in-place candidate shares those by right.
  std::vector<TensorView> answers;
  for (const TensorView& r : reference_outputs)
    if (!shared_inputs || any_overlap(r, my_inputs) < 0) answers.push_back(r);
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    const std::string output = output_label(candidate, i);
    const std::size_t paired = reference_output(i);
    for (std::size_t j = 0; j < my_inputs.size(); ++j) {
      // An in-place operation's outputs are its inputs on both sides: only a difference is a finding.
      const bool reference_too = paired < reference_outputs.size() && j < reference_inputs.size() &&
                                 overlaps(reference_outputs[paired], reference_inputs[j]);
      if (overlaps(outputs[i], my_inputs[j]) && !reference_too)
        seen.push_back({Finding::output_aliases_input,
                        output + " shares memory with input " + std::to_string(j) + " (the reference's does not)"});
    }
    if (const auto k = any_overlap(outputs[i], answers); k >= 0)
      seen.push_back({Finding::output_aliases_reference,
                      output + " shares memory with the reference's " + output_label(reference, static_cast<std::size_t>(k)) + " of this run"});
    // Earlier outputs are held only where an owner keeps them alive; others may have been freed and reused.
    const Tensors& earlier = previous_outputs_[index_of(Side::candidate)];
    if (earlier.owner)
      if (const auto k = any_overlap(outputs[i], earlier.views); k >= 0)
        seen.push_back({Finding::output_aliases_earlier_output,
                        output + " shares memory with " + output_label(earlier, static_cast<std::size_t>(k)) + " of the run before, which "
                        "kscope still holds"});
    const Tensors& earlier_reference = previous_outputs_[index_of(Side::reference)];
    if (earlier_reference.owner)
      if (const auto k = any_overlap(outputs[i], earlier_reference.views); k >= 0)
        seen.push_back({Finding::output_aliases_reference,
                        output + " shares memory with the reference's " + output_label(earlier_reference, static_cast<std::size_t>(k)) +
                            " of the run before"});
  }
}

std::string Evaluator::time_spent() const {
  return "evaluate: host time in the runs: making inputs " + as_milliseconds(time_.inputs) + " (checking them " +
         as_milliseconds(time_.input_checks) + " of it), opening the calls' regions (the L2 flush) " +
         as_milliseconds(time_.region_open) + ", the functions " + as_milliseconds(time_.functions) + ", draining the GPU after them " + as_milliseconds(time_.drain) +
         ", reading each call's outputs " + as_milliseconds(time_.after_call) + ", checking both calls " +
         as_milliseconds(time_.checks);
}

void Evaluator::measured(const RunContext& run, const std::vector<RegionRecord>& regions,
                         const RunMeasurement& measurement) {
  RunRecord& record = record_of(run.config, run);
  for (std::size_t r = 0; r < regions.size() && r < measurement.size(); ++r) {
    const std::string& name = regions[r].name;
    if (name != to_string(Side::candidate) && name != to_string(Side::reference)) continue;
    CallActivity& activity = record.activity[index_of(name == to_string(Side::candidate) ? Side::candidate
                                                                                          : Side::reference)];
    activity = {};
    activity.measured = true;
    for (const KernelMeasurement& k : measurement[r]) {
      activity.names.push_back(k.name);
      if (k.gpu_time) activity.busy_ns += static_cast<double>(k.gpu_time->end_ns - k.gpu_time->start_ns);
      activity.launched_after_return += k.launched_after_return;
      if (k.unjoined && activity.unjoined++ == 0) activity.first_unjoined = k.name;
    }
    std::sort(activity.names.begin(), activity.names.end());
  }
}

}  // namespace kscope::detail

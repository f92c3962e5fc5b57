#pragma once
// Which line is slow, and why: source-level PC sampling. profile_lines() runs a sweep as profile()
// does while the GPU samples each warp's program counter and stall reason, and returns, besides the
// sweep's per-kernel sample counts, one row per annotation x config x kernel x source line x stall
// reason (Nsight Compute's Source page as a table), the per-instruction detail behind it and, where
// the GPU supports it, the executed instructions and thread efficiency of each line.
// docs/lines.md says what each stall reason means and how samples reach the line you wrote.
#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "kscope/columns.hpp"
#include "kscope/profile.hpp"
#include "kscope/results.hpp"
#include "kscope/table.hpp"

namespace kscope {

// How profile_lines() samples.
struct LineSampling {
  // The sampling period, as a power of two of SM cycles (5 to 31: every 32 to 2^31 cycles each SM
  // samples one of its warps); 0 chooses kscope's default, 2^10 cycles (about 0.5 us at 2 GHz).
  unsigned period_log2 = 0;
  // Also count, in a second pass of each run, the instructions each line executed and how many of
  // their threads were active (CUPTI's SASS metrics), where the GPU supports it.
  bool sass_metrics = true;
  // A kernel with fewer samples than this over its recorded runs is reported as sampled too coarsely.
  std::uint64_t min_kernel_samples = 200;
};

inline constexpr unsigned kDefaultSamplingPeriodLog2 = 10;  // 2^10 cycles between samples

// A place in the source: a line of a function.
struct SourceLocation {
  std::string file;          // as the line table names it (directory and name); empty without line information
  std::uint32_t line = 0;    // 1-based; 0 without line information
  std::string function;      // the function the line is in (demangled)
  // Equal: the same file, line and function.
  friend bool operator==(const SourceLocation&, const SourceLocation&) = default;
};

// One SASS instruction's samples in one annotation, config and kernel (the raw table's rows, one per
// stall reason). Summed over the recorded runs.
struct SampledInstruction {
  std::string annotation;          // the annotation (region) it ran in
  std::size_t config_index = 0;    // the config's index in the sweep
  std::string kernel;              // the launched kernel (demangled)
  std::string function;            // the function the instruction is in: the kernel, or a device function not inlined
  std::uint64_t pc_offset = 0;     // from the function's start, in bytes
  std::string sass;                // its SASS text; empty when no disassembler was found
  // Where its code was written, innermost first: the line of the (inlined) function it came from, then
  // each call site that function was inlined at; the last is in `function` itself. Empty where the
  // code has no line information (cuBLAS, cuDNN, code built without -lineinfo).
  std::vector<SourceLocation> source;
  // Samples per stall reason (Nsight Compute's names: long_scoreboard, barrier, wait, selected, ...).
  std::vector<std::pair<std::string, std::uint64_t>> stalls;
  // The SASS metrics, where measured: warp-level instructions executed, and the threads that executed
  // them (at most 32 per warp instruction).
  std::optional<std::uint64_t> executed;         // warp-level instructions executed
  std::optional<std::uint64_t> thread_executed;  // threads that executed them
};

// What sampling saw of one kernel in one annotation and config, over the recorded runs.
struct SampledKernel {
  std::string annotation;        // the annotation (region) it ran in
  std::size_t config_index = 0;  // the config's index in the sweep
  std::string kernel;            // the launched kernel (demangled)
  std::uint64_t samples = 0;  // the samples of its instructions (the table's rows: shares are of this)
  std::uint64_t dropped = 0;  // samples the hardware dropped while its annotation ran (a full buffer)
  std::size_t launches = 0;   // its sampled launches
  unsigned period_log2 = 0;   // the sampling period it was sampled at
  std::string note;           // why its figures are partial or coarse; empty when they are not
};

// Everything a PcSampler collected in a session.
struct SampledCode {
  std::vector<SampledInstruction> instructions;  // every sampled instruction (the raw table)
  std::vector<SampledKernel> kernels;            // every sampled kernel (the kernels table)
  // The text of each source file the line rows name, as it was when measured (file -> its text).
  std::map<std::string, std::string> sources;
  bool sass_metrics = false;  // the SASS metrics were measured
  std::vector<std::string> notes;  // what the whole session could not do (no disassembler, no SASS metrics...)
};

// What a backend that samples program counters adds to MeasurementBackend (pc_sampler()). The
// simulated backend's and the pcsampling backend's.
class PcSampler {
 public:
  virtual ~PcSampler() = default;
  // Before begin_session: sample the regions of every recorded run from now on. Throws ConfigError
  // for a period out of range, BackendError when the GPU or its permissions do not allow sampling.
  virtual void sample_pcs(const LineSampling& sampling) = 0;
  // After the session (or a failed one): what was sampled, forgotten here.
  virtual SampledCode take_samples() = 0;
};

// What profile_lines() returns: the sweep's own Results (per annotation its backend's metric: the
// pcsampling backend's is its kernels' samples per run) and the sampled code, as tables.
class LineResults {
 public:
  LineResults() = default;
  // The sweep's results and what was sampled in it (profile_lines() makes them; load_line_results reads them).
  LineResults(Results sweep, SampledCode code);

  const Results& sweep() const { return sweep_; }  // the session, configs and per-run sample counts
  const SampledCode& code() const { return code_; }  // instructions, kernels and sources

  // One row per annotation x config x kernel x source line x stall reason, each kernel's lines by
  // samples: Annotation, the config axes, Kernel, File, Line, Function, StallReason, Samples,
  // SharePct (of the kernel's samples), LineSamples, LineSharePct, LineText, InlinedFrom, PcOffset
  // (code without line information: its function and offset instead of a line), InstExecuted,
  // ThreadEfficiencyPct (the SASS metrics; empty without). `configs`, if given, gets each row's
  // config index (as in the other tables).
  Table lines_table(std::vector<std::size_t>* configs = nullptr) const;
  // The per-instruction detail behind it: one row per instruction and stall reason.
  Table instructions_table(std::vector<std::size_t>* configs = nullptr) const;
  // Per annotation x config x kernel: Samples, Dropped, Launches, SamplingPeriodCycles, Note.
  Table kernels_table(std::vector<std::size_t>* configs = nullptr) const;
  // The `top` lines of each kernel, with their share and dominant stall reason, as text.
  std::string listing(std::size_t top = 10) const;

  // kscope's line results format (JSON), which load_line_results reads back.
  void write_json(const std::string& path) const;
  // The same, written to a stream.
  void write_json(std::ostream& out) const;

 private:
  Results sweep_;
  SampledCode code_;
};

std::ostream& operator<<(std::ostream& out, const LineResults& results);  // listing()

// Reads a file written by LineResults::write_json. Throws FileError when it cannot be read,
// ConfigError when it is not one.
LineResults load_line_results(const std::string& path);
LineResults load_line_results(std::istream& in, const std::string& name);

// Each line's share of its kernel's samples in two results (matched by annotation, config values,
// kernel, file and line): Annotation, the config axes, Kernel, File, Line, LineText, BaselineSharePct,
// SharePct, DeltaPct (points), BaselineDominantStall, DominantStall; the largest changes first.
Table compare_lines(const LineResults& baseline, const LineResults& candidate);

// The columns of each table, its config axes (after Annotation) left out, with their types: what
// the Python binding types the DataFrames by.
const std::vector<ColumnSpec>& line_columns();             // LineResults::lines_table()
const std::vector<ColumnSpec>& instruction_columns();      // LineResults::instructions_table()
const std::vector<ColumnSpec>& line_kernel_columns();      // LineResults::kernels_table()
const std::vector<ColumnSpec>& line_comparison_columns();  // compare_lines()

// profile() with PC sampling: `settings` as for profile() (its backend unset or pcsampling, no
// metrics, no output prefix, resume or shard); a region's kernels are added up in the sweep's table.
// Throws as profile() does, and BackendError naming the fix where sampling is not permitted.
LineResults profile_lines(const Sweep& sweep, const Settings& settings, const Body& body,
                          const LineSampling& sampling = {});
// The same on the caller's backend, which must sample (MeasurementBackend::pc_sampler(): the
// simulated backend of kscope/testing.hpp does).
LineResults profile_lines_with_backend(const Sweep& sweep, const Settings& settings, const Body& body,
                                       MeasurementBackend& backend, const LineSampling& sampling = {});

// Nsight Compute's name for each stall reason PC sampling reports, with what it means.
struct StallReason {
  std::string name;         // "long_scoreboard"
  std::string description;  // what the warp was waiting for
};
const std::vector<StallReason>& stall_reasons();
// CUPTI's counter name ("smsp__pcsamp_warps_issue_stalled_long_scoreboard") as Nsight Compute's
// stall reason name ("long_scoreboard").
std::string stall_reason_name(const std::string& cupti_name);

}  // namespace kscope

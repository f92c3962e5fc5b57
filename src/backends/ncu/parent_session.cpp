#include "backends/ncu/parent_session.hpp"

#include <stdlib.h>

#include <deque>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>

#include "backends/counters/counter_errors.hpp"
#include "backends/ncu/child_target.hpp"
#include "backends/ncu/error_kinds.hpp"
#include "backends/ncu/kernel_mapping.hpp"
#include "backends/ncu/ncu_command.hpp"
#include "backends/ncu/ncu_locator.hpp"
#include "backends/ncu/ncu_log.hpp"
#include "backends/ncu/program_command.hpp"
#include "backends/ncu/subprocess.hpp"
#include "core/model/backend_choice.hpp"
#include "core/model/caller_language.hpp"
#include "core/model/log.hpp"
#include "core/engine/outcome.hpp"
#include "core/files/output_claim.hpp"
#include "core/files/start_stamp.hpp"
#include "device/nvml.hpp"
#include "kscope/errors.hpp"

namespace kscope::ncu {
namespace {

namespace fs = std::filesystem;

struct SessionFiles {
  std::string report_stem, report, log, program_output, manifest, plain_csv, nvtx_csv;

  explicit SessionFiles(const std::string& prefix)
      : report_stem(prefix + "ncu_report"),
        report(report_stem + ".ncu-rep"),
        log(prefix + "ncu.log"),
        program_output(prefix + "ncu_program.log"),
        manifest(prefix + "ncu_manifest.json"),
        plain_csv(prefix + "ncu_raw.csv"),
        nvtx_csv(prefix + "ncu_nvtx.csv") {}
};

std::string files_prefix(const Settings& settings) {
  if (!settings.output_prefix.empty()) return settings.output_prefix;
  const char* tmp = std::getenv("TMPDIR");
  std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/kscope-ncu-XXXXXX";
  if (mkdtemp(pattern.data()) == nullptr)
    throw BackendError("could not create a directory for the Nsight Compute report under " + pattern +
                       "; set TMPDIR to a writable directory or set " + detail::option("output_prefix"));
  return pattern + "/";
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string last_lines(const std::string& path, std::size_t count) {
  std::ifstream in(path);
  std::deque<std::string> lines;
  for (std::string line; std::getline(in, line);) {
    lines.push_back(line);
    if (lines.size() > count) lines.pop_front();
  }
  std::string out;
  for (const auto& l : lines) out += "\n  | " + l;
  return out;
}

std::string not_rerunnable(const std::string& problem) {
  return detail::backend_choice(Backend::ncu) + " cannot profile here: Nsight Compute " + kMinimumNcuVersion.to_string() +
         " cannot attach to a running process, so kscope re-runs the program under ncu, but this process is " +
         problem +
         ", which cannot be re-run. Use backend 'counters' instead (the same Nsight Compute metric names, measured "
         "in this process with CUPTI's range profiler), or put the code in a script and run it as "
         "'python3 script.py'";
}

// One export of the report to CSV, parsed.
NcuCsv export_report(const std::string& ncu, const SessionFiles& files, bool rename_by_nvtx) {
  const std::string& out = rename_by_nvtx ? files.nvtx_csv : files.plain_csv;
  const auto cmd = import_command(ncu, files.report, rename_by_nvtx);
  Subprocess child(cmd, {{}, out});
  if (const int rc = child.wait(); rc != 0)
    throw BackendError("'" + shell_quoted(cmd) + "' failed with exit code " + std::to_string(rc) + ":" +
                       last_lines(out, 10) + "\nThe report is " + files.report);
  return parse_ncu_csv(read_file(out), out);
}

[[noreturn]] void rethrow_child_error(const ManifestError& e, const std::string& context) {
  if (e.kind == "SweepError") {
    const std::string message =
        "config (" + e.failed_config + ") failed in the program re-run under Nsight Compute: " + e.message + context;
    throw SweepError(message, e.failed_config, make_error(e.cause_kind, e.message), std::make_shared<const Results>());
  }
  std::rethrow_exception(make_error(e.kind, "in the program re-run under Nsight Compute: " + e.message + context));
}

// Why the ncu run produced nothing usable; returns only when it succeeded.
void check_run(int exit_code, const std::optional<ChildManifest>& manifest, const SessionFiles& files,
               const std::vector<std::string>& metrics, std::size_t ordinal) {
  const std::string output = "\nProgram output (" + files.program_output + "), last lines:" +
                             last_lines(files.program_output, 15) + "\nNsight Compute log: " + files.log;
  using Kind = LogDiagnosis::Kind;
  const LogDiagnosis diagnosis =
      diagnose_ncu_log(parse_ncu_log(read_file(files.log)), metrics, files.log, counters::read_access_facts());
  // Permission and metric problems explain whatever else went wrong, so they come first.
  if (diagnosis.kind == Kind::permission || diagnosis.kind == Kind::unknown_metric) throw BackendError(diagnosis.message);
  if (manifest && manifest->error) rethrow_child_error(*manifest->error, output);
  if (diagnosis.kind != Kind::none) throw BackendError(diagnosis.message + output);
  if (exit_code != 0)
    throw BackendError("the program re-run under Nsight Compute exited with code " + std::to_string(exit_code) +
                       " before finishing the profiled session" + output);
  if (!manifest)
    throw BackendError(
        "the program re-run under Nsight Compute ended without reaching its profile() call #" +
        std::to_string(ordinal) +
        ". The re-run must make the same profile() calls as the original run; calls before the profiled one return "
        "empty Results there (they are not measured again), so code that reads their results must accept "
        "Results::empty()" + output);
  if (!fs::exists(files.report))
    throw BackendError("Nsight Compute wrote no report (" + files.report +
                       "): it profiled no kernel inside kscope's annotations" + output);
}

// Runs the program under ncu and returns the child's manifest once the run is known to be good.
ChildManifest run_under_ncu(const Sweep& sweep, const Settings& settings, std::size_t ordinal, const NcuProbe& ncu,
                            const SessionFiles& files) {
  const ProgramCommand program = current_program();
  if (const std::string problem = rerun_problem(program); !problem.empty()) throw BackendError(not_rerunnable(problem));
  std::error_code ignored;
  fs::remove(files.manifest, ignored);
  fs::remove(files.report, ignored);
  const auto cmd = profile_command(ncu.path, settings, files.report_stem, files.log, program.command_line());
  detail::log_info("backend ncu: re-running this program under Nsight Compute " + ncu.version->to_string() +
                   " to profile its profile() call #" + std::to_string(ordinal) + " (program output goes to " +
                   files.program_output + "):\n  " + shell_quoted(cmd));
  Subprocess child(cmd, {child_environment({ordinal, session_key(sweep, settings), files.manifest}),
                         files.program_output});
  const int exit_code = child.wait();
  std::optional<ChildManifest> manifest = read_manifest(files.manifest);
  check_run(exit_code, manifest, files, requested_metrics(settings), ordinal);
  return std::move(*manifest);
}

}  // namespace

Results profile_under_ncu(const Sweep& sweep, const Settings& settings, std::size_t ordinal) {
  if (settings.sampling != Sampling::fixed)
    throw ConfigError(detail::spell("Backend::ncu needs Settings::sampling = Sampling::fixed",
                                    "backend='ncu' cannot sample adaptively (drop adaptive=)") +
                      ": adaptive sampling decides after each run from its measurements, and ncu's numbers exist "
                      "only once the profiled process has ended");
  const NcuProbe ncu = require_ncu();
  std::optional<detail::OutputClaim> claim;  // the prefix, until the results are written
  if (!settings.output_prefix.empty()) claim.emplace(settings);
  SessionInfo info;
  detail::stamp_start(info);
  const SessionFiles files(files_prefix(settings));
  ChildManifest manifest = run_under_ncu(sweep, settings, ordinal, ncu, files);

  const ReportContents report = read_report(export_report(ncu.path, files, false), export_report(ncu.path, files, true),
                                            requested_metrics(settings), files.report);
  const bool per_kernel = settings.replay_mode == ReplayMode::kernel;
  const std::vector<RunKernels> kernels = map_kernels(manifest, report, {files.report, files.log, per_kernel});

  info.backend = Backend::ncu;
  info.cache_control = settings.cache_control;
  info.clock_control = settings.clock_control;
  info.gpu = report.gpu;
  info.driver_version = device::driver_version(device::nvml());  // ncu ran on this machine's driver
  info.host = report.host;
  info.rated_sm_clock_mhz = report.rated_sm_clock_mhz;
  info.rated_memory_clock_mhz = report.rated_memory_clock_mhz;
  info.sm_count = report.sm_count;
  info.compute_capability = report.compute_capability;
  info.memory_bus_width_bits = report.memory_bus_width_bits;
  info.report_path = files.report;
  return results_from_report(sweep, settings, info, report.metrics, manifest, kernels);
}

Results results_from_report(const Sweep& sweep, const Settings& settings, const SessionInfo& session,
                            const std::vector<MetricSpec>& metrics, const ChildManifest& manifest,
                            const std::vector<RunKernels>& kernels) {
  const std::vector<Config> configs = sweep.configs();
  detail::Aggregator aggregator(configs, metrics, settings);
  for (std::size_t i = 0; i < manifest.runs.size(); ++i) {
    const ManifestRun& run = manifest.runs[i];
    if (run.config >= configs.size())
      throw InternalError("the profiled child process recorded config " + std::to_string(run.config + 1) + " of a sweep of " +
                          std::to_string(configs.size()) + " (kscope bug: please report it with this message)");
    try {
      aggregator.add_run({run.config, run.run, run.regions, kernels.at(i)});
    } catch (...) {
      throw detail::sweep_failure(aggregator, session, settings, configs.size(), &configs[run.config],
                                  "run " + std::to_string(run.run + 1), std::current_exception());
    }
  }
  return detail::final_results(aggregator, session, settings, configs.size());
}

}  // namespace kscope::ncu

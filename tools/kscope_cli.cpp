// kscope: the command line. `doctor` checks what will and will not work here; `metrics` lists the
// counter backend's metrics (the same command as kscope-metrics); `compare` compares two saved
// results (tools/compare_command.cpp); `merge` joins the shards of a sweep (tools/merge_command.cpp);
// `evaluate` runs many candidates against their references (Python's, tools/python_command.cpp).
// `lines` prints a saved line sampling (tools/lines_command.cpp).
// Each command parses its own arguments (CLI11); this program picks the command, and answers
// --help and --version.
#include <unistd.h>

#include <cstdio>
#include <exception>
#include <functional>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "command_line.hpp"
#include "compare_command.hpp"
#include "kscope/detail/caller.hpp"
#include "kscope/doctor.hpp"
#include "lines_command.hpp"
#include "merge_command.hpp"
#include "metrics_command.hpp"
#include "python_command.hpp"

namespace {

const char* const kUsage = "usage: kscope COMMAND [ARGS...]   (kscope --help lists the commands)\n";

const char* const kDoctorDescription =
    "Checks, in seconds and without changing anything, what kscope can measure on this machine and why\n"
    "not: NVIDIA driver and CUDA versions, the GPUs (name, SMs, L2, rated clocks, UUID), CUPTI (loads,\n"
    "version, owned by another profiler?), hardware-counter permission (RmProfilingAdminOnly and a\n"
    "one-metric range-profiler probe), NVML and clock-lock permission (read, never tried), the Nsight\n"
    "Compute CLI (ncu) and its version, PC-sampling permission (a sampling probe), and whether CUDA was\n"
    "already initialised in this process.";

const char* const kDoctorFooter =
    "Exit status:\n"
    "  0   every backend (cupti, events, counters, auto, ncu, pcsampling) works here\n"
    "  1   some backends are unavailable; the report says which and why\n"
    "  2   nothing can measure: no NVIDIA driver, no GPU, or a driver too old for kscope's CUDA\n"
    "  64  bad command line\n"
    "  74  the report could not be written\n";

int doctor(const std::vector<std::string>& args) {
  // Backends and fixes named as the command line and Python name them (backend='auto', `kscope doctor`).
  const kscope::detail::CallerScope caller(kscope::detail::Caller::command_line);
  CLI::App app{kDoctorDescription, "kscope doctor"};
  app.footer(kDoctorFooter);
  bool json = false;
  app.add_flag("--json", json, "print the report as JSON instead of text");
  if (const auto status = kscope::cli::parse(app, args, std::cout, std::cerr, "usage: kscope doctor [--json]\n"))
    return *status;
  try {
    const kscope::DoctorReport report = kscope::run_doctor();
    std::fputs((json ? kscope::to_json(report) : kscope::to_text(report)).c_str(), stdout);
    return report.exit_code();
  } catch (const std::exception& e) {
    // Every probe reports its own failures; reaching here is a kscope bug.
    std::fprintf(stderr, "kscope doctor: %s\n", e.what());
    return 2;
  }
}

struct Command {
  const char* summary;
  std::function<int(const std::vector<std::string>&)> run;
};

const std::map<std::string, Command>& commands() {
  static const std::map<std::string, Command> all{
      {"doctor", {"what kscope can measure on this machine, and why not", doctor}},
      {"metrics",
       {"the hardware metrics the counters backend can collect",
        [](const std::vector<std::string>& args) { return metrics_command("kscope metrics", args); }}},
      {"compare",
       {"two saved results: faster, slower or the same",
        [](const std::vector<std::string>& args) {
          return compare_command(args, std::cout, std::cerr, isatty(STDOUT_FILENO));
        }}},
      {"merge",
       {"the shards of a sweep as one result",
        [](const std::vector<std::string>& args) { return merge_command(args, std::cout, std::cerr); }}},
      {"evaluate",
       {"a directory of candidate kernels against their references, as one table (in Python)",
        [](const std::vector<std::string>& args) { return python_command("evaluate", args); }}},
      {"lines",
       {"which line is slow: a saved line sampling's listing, or two compared",
        [](const std::vector<std::string>& args) { return lines_command(args, std::cout, std::cerr); }}},
  };
  return all;
}

// `kscope` without a command: --help, --version, or a bad command line.
int without_command(const std::vector<std::string>& args) {
  if (!args.empty() && !args[0].starts_with("-")) {
    std::cerr << "kscope: unknown command '" << args[0] << "'\n" << kUsage;
    return kscope::cli::kUsageError;
  }
  CLI::App app{"kscope: profiling as code for GPU kernels. Each command takes --help.", "kscope"};
  app.set_version_flag("--version", "kscope " KSCOPE_VERSION);
  for (const auto& [name, command] : commands()) app.add_subcommand(name, command.summary);
  app.require_subcommand(1);
  if (const auto status = kscope::cli::parse(app, args, std::cout, std::cerr, kUsage)) return *status;
  return kscope::cli::kUsageError;  // not reached: a command was required, and main runs the commands
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  const auto command = args.empty() ? commands().end() : commands().find(args[0]);
  const int status = command == commands().end() ? without_command(args)
                                                  : command->second.run({args.begin() + 1, args.end()});
  return kscope::cli::flushed(status);
}

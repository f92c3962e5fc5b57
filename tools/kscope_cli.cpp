// kscope: the command line. `doctor` checks what will and will not work here; `metrics` lists the
// counter backend's metrics (the same command as kscope-metrics); `compare` compares two saved
// results (tools/compare_command.cpp); `merge` joins the shards of a sweep (tools/merge_command.cpp).
#include <unistd.h>

#include <cstdio>
#include <exception>
#include <iostream>
#include <string>
#include <vector>

#include "compare_command.hpp"
#include "merge_command.hpp"
#include "kscope/doctor.hpp"
#include "metrics_command.hpp"

namespace {

constexpr int kUsageError = 64;  // EX_USAGE

const char* const kUsage =
    "usage: kscope doctor [--json]   what kscope can measure on this machine, and why not\n"
    "       kscope metrics [...]     the hardware metrics Backend::counters can collect\n"
    "       kscope compare BASELINE.json CANDIDATE.json [...]   faster, slower or the same\n"
    "       kscope merge OUT_PREFIX INPUT...   the shards of a sweep as one result\n"
    "       kscope COMMAND --help\n";

const char* const kDoctorHelp =
    "usage: kscope doctor [--json]\n"
    "\n"
    "Checks, in seconds and without changing anything, what kscope can measure on this machine and why\n"
    "not: NVIDIA driver and CUDA versions, the GPUs (name, SMs, L2, rated clocks, UUID), CUPTI (loads,\n"
    "version, owned by another profiler?), hardware-counter permission (RmProfilingAdminOnly and a\n"
    "one-metric range-profiler probe), NVML and clock-lock permission (read, never tried), the Nsight\n"
    "Compute CLI (ncu) and its version, and whether CUDA was already initialised in this process.\n"
    "\n"
    "  --json   print the report as JSON instead of text\n"
    "\n"
    "Exit status:\n"
    "  0   every backend (cupti, events, counters, automatic, ncu) works here\n"
    "  1   some backends are unavailable; the report says which and why\n"
    "  2   nothing can measure: no NVIDIA driver, no GPU, or a driver too old for kscope's CUDA\n"
    "  64  bad command line\n";

int doctor(const std::vector<std::string>& args) {
  bool json = false;
  for (const auto& a : args) {
    if (a == "--help" || a == "-h") {
      std::fputs(kDoctorHelp, stdout);
      return 0;
    }
    if (a != "--json") {
      std::fprintf(stderr, "kscope doctor: unknown option '%s'\n%s", a.c_str(), kUsage);
      return kUsageError;
    }
    json = true;
  }
  const kscope::DoctorReport report = kscope::run_doctor();
  std::fputs((json ? kscope::to_json(report) : kscope::to_text(report)).c_str(), stdout);
  return report.exit_code();
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty() || args[0] == "--help" || args[0] == "-h") {
    std::fputs(kUsage, args.empty() ? stderr : stdout);
    return args.empty() ? kUsageError : 0;
  }
  if (args[0] == "metrics") return metrics_command("kscope metrics", {args.begin() + 1, args.end()});
  if (args[0] == "compare") return compare_command({args.begin() + 1, args.end()}, std::cout, std::cerr, isatty(STDOUT_FILENO));
  if (args[0] == "merge") return merge_command({args.begin() + 1, args.end()}, std::cout, std::cerr);
  if (args[0] != "doctor") {
    std::fprintf(stderr, "kscope: unknown command '%s'\n%s", args[0].c_str(), kUsage);
    return kUsageError;
  }
  try {
    return doctor({args.begin() + 1, args.end()});
  } catch (const std::exception& e) {
    // Every probe reports its own failures; reaching here is a kscope bug.
    std::fprintf(stderr, "kscope doctor: %s\n", e.what());
    return 2;
  }
}

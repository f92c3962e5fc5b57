#include "merge_command.hpp"

#include <ostream>

#include "core/caller.hpp"
#include "kscope/errors.hpp"
#include "kscope/merge.hpp"

namespace {

constexpr int kCannotMerge = 2;
constexpr int kUsageError = 64;  // EX_USAGE

const char* const kUsage = "usage: kscope merge OUT_PREFIX INPUT...\n";

const char* const kHelp =
    "usage: kscope merge OUT_PREFIX INPUT...\n"
    "\n"
    "Joins the shards of one sweep (measured with Settings::shard, shard=, or KSCOPE_SHARD=index/count by\n"
    "several processes, GPUs or hosts) into the result one process would have given, and writes it as\n"
    "OUT_PREFIXsummary.csv, OUT_PREFIXsamples.csv and OUT_PREFIXresults.json. Each INPUT is a shard's\n"
    "results file, or the output prefix the shards were given: every PREFIXshard-<i>-of-<n>-results.json\n"
    "there is taken. The shards' raw samples go through the same aggregation as a single run's; every\n"
    "row keeps the GPU and host of the shard that measured it.\n"
    "\n"
    "Refused (exit 2): shards of different sweeps, settings, backends or GPU models, of splits into\n"
    "different counts, a shard missing or given twice, a shard that did not finish (resume it first).\n"
    "Warned: different drivers, observed SM clocks more than 2% apart.\n"
    "\n"
    "Exit status:\n"
    "  0   merged and written\n"
    "  2   the inputs cannot be merged, or the output cannot be written\n"
    "  64  bad command line\n";

}  // namespace

int merge_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  const kscope::detail::CallerScope caller(kscope::detail::Caller::command_line);
  for (const auto& a : args)
    if (a == "--help" || a == "-h") {
      out << kHelp;
      return 0;
    }
  for (const auto& a : args)
    if (a.size() > 1 && a[0] == '-') {
      err << "kscope merge: unknown option '" << a << "'\n" << kUsage;
      return kUsageError;
    }
  if (args.size() < 2) {
    err << "kscope merge: expected an output prefix and at least one input\n" << kUsage;
    return kUsageError;
  }
  try {
    std::vector<std::string> warnings;
    const kscope::Results merged = kscope::merge_files({args.begin() + 1, args.end()}, &warnings);
    for (const auto& w : warnings) err << "kscope merge: warning: " << w << "\n";
    merged.write_all(args[0]);
    out << merged << "merged " << merged.shard_sessions().size() << " shards into " << args[0]
        << "{summary.csv,samples.csv,results.json}\n";
    return 0;
  } catch (const kscope::Error& e) {
    err << "kscope merge: " << e.what() << "\n";
    return kCannotMerge;
  }
}

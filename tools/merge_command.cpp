#include "merge_command.hpp"

#include <ostream>
#include <string>

#include "command_line.hpp"
#include "kscope/detail/caller.hpp"
#include "kscope/detail/result_files.hpp"
#include "kscope/errors.hpp"
#include "kscope/merge.hpp"

namespace {

constexpr int kCannotMerge = 2;

const char* const kUsage = "usage: kscope merge OUT_PREFIX INPUT... [--overwrite]\n";

std::string description() {
  return "Joins the shards of one sweep (measured with Settings::shard, shard=, or KSCOPE_SHARD=index/count by\n"
         "several processes, GPUs or hosts) into the result one process would have given, and writes it as\n" +
         kscope::detail::result_files_text("OUT_PREFIX") +
         " (an existing\n"
         "directory's name stands for that directory). Each INPUT is a shard's results file, or the output\n"
         "prefix the sweep was given: its shards' PREFIX[FUNCTION-N-]shard-<i>-of-<n>-results.json files are\n"
         "taken. The shards' raw samples go through the same aggregation as a single run's; every row keeps\n"
         "the GPU and host of the shard that measured it. The merged files never replace a measured sweep's\n"
         "(or an evaluation's, a race's), even with --overwrite; an earlier merge there is moved aside to\n"
         "numbered backups (results.json.~1~), or replaced with --overwrite; OUT_PREFIX is never a device.";
}

const char* const kFooter =
    "Refused (exit 2): shards of different sweeps, settings, backends or GPU models, of splits into\n"
    "different counts, a shard missing or given twice, a shard that did not finish (resume it first);\n"
    "an OUT_PREFIX that holds a sweep, an evaluation or a race, names a device or is in use by a sweep;\n"
    "an INPUT that holds a sweep measured without shards (read it with kscope.load).\n"
    "Warned: different drivers, observed SM clocks more than 2% apart.\n"
    "\n"
    "Exit status:\n"
    "  0   merged and written\n"
    "  2   the inputs cannot be merged, or the output cannot be written\n"
    "  64  bad command line\n"
    "  74  the table could not be printed\n";

}  // namespace

int merge_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  const kscope::detail::CallerScope caller(kscope::detail::Caller::command_line);
  CLI::App app{description(), "kscope merge"};
  app.footer(kFooter);
  std::string out_prefix;
  std::vector<std::string> inputs;
  app.add_option("OUT_PREFIX", out_prefix, "where the merged files go")->required()->type_name("");
  app.add_option("INPUT", inputs, "a shard's results file, or the output prefix of the sweep")->required()->type_name("");
  bool overwrite = false;
  app.add_flag("--overwrite", overwrite, "replace the earlier merge under OUT_PREFIX instead of moving it aside");
  if (const auto status = kscope::cli::parse(app, args, out, err, kUsage)) return *status;
  try {
    std::vector<std::string> warnings;
    const kscope::Results merged = kscope::merge_files(inputs, &warnings);
    for (const auto& w : warnings) err << "kscope merge: warning: " << w << "\n";
    const std::string prefix = kscope::write_merged(merged, out_prefix, overwrite);
    out << merged << "merged " << merged.shard_sessions().size() << " shards into "
        << kscope::detail::result_files_text(prefix) << "\n";
    return 0;
  } catch (const kscope::Error& e) {
    err << "kscope merge: " << e.what() << "\n";
    return kCannotMerge;
  }
}

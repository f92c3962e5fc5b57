// `kscope metrics` and `kscope-metrics`: the hardware metrics the counters backend can collect, from
// CUPTI's metric database. With --chip it runs offline (no GPU); without, it asks the current CUDA
// device.
//   [--chip GH100] [FILTER]          base metrics whose name contains FILTER
//   [--chip GH100] --full [FILTER]   the same, one line per full name (base + suffix)
//   [--chip GH100] --describe NAME   type, unit, description and suffixes of one metric
//   [--chip GH100] --passes m1,m2    replay passes the list needs together
//   --chips                          the chips CUPTI knows
//   --sol                            the Speed-of-Light preset and the bottleneck rule
#include "metrics_command.hpp"

#include <algorithm>
#include <cstdio>
#include <exception>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "command_line.hpp"
#include "kscope/detail/caller.hpp"
#include "kscope/errors.hpp"
#include "kscope/metrics.hpp"

namespace {

constexpr int kRefused = 1;

std::string usage(const std::string& program) {
  return "usage: " + program + " [--chip CHIP] [--full] [FILTER]\n" +
         "       " + program + " [--chip CHIP] --describe NAME\n" +
         "       " + program + " [--chip CHIP] --passes METRIC[,METRIC...]\n" +
         "       " + program + " --chips | --sol\n";
}

const char* const kDescription =
    "The hardware metrics the counters backend can collect, from CUPTI's metric database (Nsight\n"
    "Compute's names). With --chip it runs offline, without a GPU; without, it asks the current GPU.";

const char* const kFooter =
    "CHIP is a CUPTI chip name such as GH100 (H100/H200); --chips lists them.\n"
    "\n"
    "Exit status:\n"
    "  0   listed\n"
    "  1   the metric database refused (an unknown chip or metric, no GPU without --chip)\n"
    "  64  bad command line\n"
    "  74  the output could not be written\n";

std::vector<std::string> split_commas(const std::string& list) {
  std::vector<std::string> out;
  std::stringstream in(list);
  for (std::string item; std::getline(in, item, ',');)
    if (!item.empty()) out.push_back(item);
  return out;
}

// Prints rows in aligned columns, never truncated (the names are what a user copies).
void print_columns(const std::vector<std::vector<std::string>>& rows) {
  std::vector<std::size_t> width;
  for (const auto& row : rows)
    for (std::size_t c = 0; c < row.size(); ++c) {
      if (width.size() <= c) width.push_back(0);
      width[c] = std::max(width[c], row[c].size());
    }
  for (const auto& row : rows) {
    std::string line;
    for (std::size_t c = 0; c < row.size(); ++c)
      line += c + 1 == row.size() ? row[c] : row[c] + std::string(width[c] - row[c].size() + 2, ' ');
    std::printf("%s\n", line.c_str());
  }
}

int list(const std::string& chip, const std::string& filter, bool full) {
  std::vector<std::vector<std::string>> rows;
  rows.push_back(full ? std::vector<std::string>{"METRIC", "UNIT"}
                      : std::vector<std::string>{"METRIC", "TYPE", "UNIT", "DESCRIPTION"});
  for (const auto& m : kscope::list_metrics(chip)) {
    if (m.name.find(filter) == std::string::npos) continue;
    if (!full) {
      rows.push_back({m.name, kscope::to_string(m.type), m.unit, m.description});
      continue;
    }
    // Units can change with the suffix (.per_second, .pct_of_peak_*), so each name is described.
    for (const auto& s : m.suffixes) rows.push_back({m.name + s, kscope::describe_metric(m.name + s, chip).unit});
  }
  print_columns(rows);
  std::printf("%zu %s\n", rows.size() - 1, full ? "metric names" : "base metrics (--full lists them with suffixes)");
  return 0;
}

int describe(const std::string& chip, const std::string& name) {
  const kscope::MetricInfo m = kscope::describe_metric(name, chip);
  std::printf("%s\n  type: %s\n  unit: %s\n  hardware unit: %s\n  description: %s\n  suffixes of its base:",
              m.name.c_str(), kscope::to_string(m.type).c_str(), m.unit.c_str(), m.hw_unit.c_str(),
              m.description.c_str());
  for (const auto& s : m.suffixes) std::printf(" %s", s.c_str());
  std::printf("\n  replay passes alone: %zu\n", kscope::count_passes({name}, chip));
  return 0;
}

int sol() {
  std::printf("Speed-of-Light preset (C++ kscope::sol_metrics(), Python kscope.sol_metrics()):\n");
  for (const auto& m : kscope::sol_metrics()) std::printf("  %s\n", m.c_str());
  std::printf("Bottleneck rule: %s\n", kscope::bottleneck_rule().c_str());
  return 0;
}

struct Request {
  std::string chip, filter, describe, passes;
  bool full = false, chips = false, sol = false;
};

int run(const Request& r) {
  if (r.chips) {
    for (const auto& c : kscope::supported_chips()) std::printf("%s\n", c.c_str());
    return 0;
  }
  if (r.sol) return sol();
  if (!r.describe.empty()) return describe(r.chip, r.describe);
  if (!r.passes.empty()) {
    std::printf("%zu\n", kscope::count_passes(split_commas(r.passes), r.chip));
    return 0;
  }
  return list(r.chip, r.filter, r.full);
}

}  // namespace

int metrics_command(const std::string& program, const std::vector<std::string>& args) {
  // The messages name this command's flags, and kscope's options as Python spells them.
  const kscope::detail::CallerScope caller(kscope::detail::Caller::command_line);
  CLI::App app{kDescription, program};
  app.footer(kFooter);
  Request r;
  app.add_option("FILTER", r.filter, "list only the base metrics whose name contains it")->type_name("");
  app.add_option("--chip", r.chip, "a CUPTI chip name, e.g. GH100; without it the current GPU's")->type_name("CHIP");
  app.add_flag("--full", r.full, "one line per full name (base and suffix), with its unit");
  app.add_option("--describe", r.describe, "type, unit, description and suffixes of one metric")->type_name("NAME");
  app.add_option("--passes", r.passes, "the replay passes these metrics need together")->type_name("METRIC[,METRIC...]");
  app.add_flag("--chips", r.chips, "the chips CUPTI knows");
  app.add_flag("--sol", r.sol, "the Speed-of-Light preset and the bottleneck rule");
  if (const auto status = kscope::cli::parse(app, args, std::cout, std::cerr, usage(program))) return *status;
  try {
    return run(r);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: %s\n", program.c_str(), e.what());
    return kRefused;
  }
}

// `kscope metrics` and `kscope-metrics`: the hardware metrics Backend::counters can collect, from
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
#include <sstream>
#include <string>
#include <vector>

#include "kscope/errors.hpp"
#include "kscope/metrics.hpp"

namespace {

constexpr int kUsage = 64;

int usage(const std::string& program, std::FILE* to) {
  const std::string text = "usage: " + program + " [--chip CHIP] [--full] [FILTER]\n" +
                           "       " + program + " [--chip CHIP] --describe NAME\n" +
                           "       " + program + " [--chip CHIP] --passes METRIC[,METRIC...]\n" +
                           "       " + program + " --chips | --sol\n" +
                           "CHIP is a CUPTI chip name such as GH100 (H100/H200); without --chip the current GPU's is used.\n";
  std::fputs(text.c_str(), to);
  return to == stdout ? 0 : kUsage;
}

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
  std::printf("Speed-of-Light preset (kscope::sol_metrics()):\n");
  for (const auto& m : kscope::sol_metrics()) std::printf("  %s\n", m.c_str());
  std::printf("Bottleneck rule: %s\n", kscope::bottleneck_rule().c_str());
  return 0;
}

int run(const std::string& program, const std::vector<std::string>& args) {
  std::string chip, filter, describe_name, passes;
  bool full = false;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    const auto value = [&](std::string& into) {
      if (i + 1 >= args.size()) return false;
      into = args[++i];
      return true;
    };
    if (arg == "--chip") {
      if (!value(chip)) return usage(program, stderr);
    } else if (arg == "--describe") {
      if (!value(describe_name)) return usage(program, stderr);
    } else if (arg == "--passes") {
      if (!value(passes)) return usage(program, stderr);
    } else if (arg == "--full") {
      full = true;
    } else if (arg == "--chips") {
      for (const auto& c : kscope::supported_chips()) std::printf("%s\n", c.c_str());
      return 0;
    } else if (arg == "--sol") {
      return sol();
    } else if (arg == "-h" || arg == "--help") {
      return usage(program, stdout);
    } else if (arg.rfind("--", 0) == 0 || !filter.empty()) {
      return usage(program, stderr);
    } else {
      filter = arg;
    }
  }
  if (!describe_name.empty()) return describe(chip, describe_name);
  if (!passes.empty()) {
    const auto metrics = split_commas(passes);
    std::printf("%zu\n", kscope::count_passes(metrics, chip));
    return 0;
  }
  return list(chip, filter, full);
}

}  // namespace

int metrics_command(const std::string& program, const std::vector<std::string>& args) {
  try {
    return run(program, args);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: %s\n", program.c_str(), e.what());
    return 1;
  }
}

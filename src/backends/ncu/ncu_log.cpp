#include "backends/ncu/ncu_log.hpp"

#include <algorithm>
#include <sstream>

#include "core/model/caller_language.hpp"
#include "core/model/suggest.hpp"

namespace kscope::ncu {
namespace {

bool any_contains(const std::vector<std::string>& lines, const std::string& word) {
  return std::any_of(lines.begin(), lines.end(), [&](const std::string& l) { return l.find(word) != std::string::npos; });
}

std::string bulleted(const std::vector<std::string>& lines) {
  std::string out;
  for (const auto& l : lines) out += "\n  - " + l;
  return out;
}

}  // namespace

NcuLog parse_ncu_log(const std::string& text) {
  NcuLog log;
  std::istringstream in(text);
  const auto take = [](const std::string& line, const std::string& prefix, std::vector<std::string>& into) {
    if (line.rfind(prefix, 0) != 0) return false;
    std::string rest = line.substr(prefix.size());
    rest.erase(0, rest.find_first_not_of(' '));
    into.push_back(rest);
    return true;
  };
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    take(line, "==ERROR==", log.errors) || take(line, "==WARNING==", log.warnings) ||
        take(line, "==PROF==", log.progress);
  }
  return log;
}

LogDiagnosis diagnose_ncu_log(const NcuLog& log, const std::vector<std::string>& metrics, const std::string& log_path,
                              const counters::AccessFacts& access) {
  using Kind = LogDiagnosis::Kind;
  const std::string see = " (Nsight Compute log: " + log_path + ")";
  if (any_contains(log.errors, "ERR_NVGPUCTRPERM") || any_contains(log.warnings, "ERR_NVGPUCTRPERM")) {
    return {Kind::permission, "Nsight Compute may not read this GPU's performance counters (ERR_NVGPUCTRPERM)" + see +
                                  ". " + counters::counter_error_message(CUPTI_ERROR_INSUFFICIENT_PRIVILEGES, "ncu", access)};
  }
  if (any_contains(log.errors, "Failed to find metric")) {
    return {Kind::unknown_metric, "Nsight Compute does not know some of the requested metrics " +
                                      detail::quoted_list(metrics) + ":" + bulleted(log.errors) +
                                      "\nList the valid names with 'ncu --query-metrics --query-metrics-mode suffix' "
                                      "and correct " + detail::option("metrics") + see};
  }
  if (!log.errors.empty())
    return {Kind::errors, "Nsight Compute reported errors:" + bulleted(log.errors) + "\nNsight Compute log: " + log_path};
  if (any_contains(log.warnings, "No kernels were profiled")) {
    return {Kind::no_kernels,
            "Nsight Compute profiled no kernel inside kscope's annotations" + see +
                ". The annotated regions launched no GPU kernel while ncu watched, or launched them from another "
                "thread than the one that opened the annotation (ncu follows NVTX ranges per thread): launch the "
                "kernels inside the annotation, from the thread that opened it"};
  }
  return {};
}

}  // namespace kscope::ncu

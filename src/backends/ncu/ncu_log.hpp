#pragma once
// Nsight Compute's log (--log-file): lines prefixed ==PROF== (progress), ==WARNING== and ==ERROR==,
// and what they say went wrong. ncu exits 0 for several failures (an unknown metric, no kernel
// matched), so the log is read after every run, whatever the exit code.
#include <string>
#include <vector>

#include "backends/counters/counter_errors.hpp"

namespace kscope::ncu {

struct NcuLog {
  std::vector<std::string> errors;    // the text after "==ERROR== "
  std::vector<std::string> warnings;  // after "==WARNING== "
  std::vector<std::string> progress;  // after "==PROF== "
};

NcuLog parse_ncu_log(const std::string& text);

struct LogDiagnosis {
  enum class Kind {
    none,            // the log shows no failure
    permission,      // ERR_NVGPUCTRPERM: counters restricted to administrators
    unknown_metric,  // "Failed to find metric"
    errors,          // other ==ERROR== lines
    no_kernels,      // "No kernels were profiled"
  };
  Kind kind = Kind::none;
  std::string message;  // what went wrong, the fix, and the log's path
};

// `access` words the permission fix.
LogDiagnosis diagnose_ncu_log(const NcuLog& log, const std::vector<std::string>& metrics, const std::string& log_path,
                              const counters::AccessFacts& access);

}  // namespace kscope::ncu

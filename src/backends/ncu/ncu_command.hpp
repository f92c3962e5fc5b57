#pragma once
// The ncu command lines kscope runs: the profiling run of the re-executed program, and the two
// report exports. --clock-control is always given: ncu's own default is "base" (it locks the
// clocks), and kscope passes the session's ClockControl explicitly (default none).
#include <string>
#include <vector>

#include "kscope/settings.hpp"

namespace kscope::ncu {

// Settings::metrics, or gpu__time_duration.sum when empty.
std::vector<std::string> requested_metrics(const Settings& settings);

// `report_stem` is the report path without ".ncu-rep" (ncu adds it). `program` is the command
// line of the process to profile (its executable first).
std::vector<std::string> profile_command(const std::string& ncu, const Settings& settings, const std::string& report_stem,
                                         const std::string& log_path, const std::vector<std::string>& program);

// `ncu --import <report> --csv --page raw --print-units base`, with --print-nvtx-rename kernel
// when `rename_by_nvtx` (each kernel then carries the name of its innermost NVTX range).
std::vector<std::string> import_command(const std::string& ncu, const std::string& report, bool rename_by_nvtx);

}  // namespace kscope::ncu

#pragma once
// How a sweep ends, whatever measured it: its Results (normalized, written to the output prefix),
// or a SweepError that names the config and runs that failed and carries what was measured before.
#include <exception>
#include <string>

#include "core/aggregator.hpp"
#include "kscope/errors.hpp"

namespace kscope::detail {

Results final_results(const Aggregator& aggregator, const SessionInfo& session, const Settings& settings,
                      std::size_t config_count);

// `config`: the failing config (nullptr when the sweep failed after its last run); `what`: the runs
// that failed ("run 3", "warm-up run 1 to run 4"); `aftermath`: appended to the message.
SweepError sweep_failure(const Aggregator& aggregator, const SessionInfo& session, const Settings& settings,
                         std::size_t config_count, const Config* config, const std::string& what,
                         std::exception_ptr cause, const std::string& aftermath = "");

}  // namespace kscope::detail

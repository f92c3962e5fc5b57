#pragma once
// How a sweep ends, whatever measured it: its Results (normalized, written to the output prefix),
// a SweepError that names the config and runs that failed and carries what was measured before,
// or a SweepInterrupted (Ctrl-C) that carries the same.
#include <exception>
#include <string>
#include <vector>

#include "core/engine/aggregator.hpp"
#include "kscope/errors.hpp"

namespace kscope::detail {

// Throws SweepError when the results cannot be normalized, or written to the output prefix: then
// the complete results are its partial_results. `samples_on_disk`: the prefix's samples file holds
// every sample already (streamed by the session), so only the other formats' files are written.
// `written_after`: the prefix files the session's caller writes itself (write_result_files).
Results final_results(const Aggregator& aggregator, const SessionInfo& session, const Settings& settings,
                      std::size_t config_count, bool samples_on_disk = false,
                      const std::vector<std::string>& written_after = {});

// `config`: the failing config (nullptr when the sweep failed after its last run); `what`: the runs
// that failed ("run 3", "warm-up run 1 to run 4"); `aftermath`: appended to the message. A
// CallbackFailure cause is named in `what` and replaced by the callable's own exception.
SweepError sweep_failure(const Aggregator& aggregator, const SessionInfo& session, const Settings& settings,
                         std::size_t config_count, const Config* config, std::string what,
                         std::exception_ptr cause, const std::string& aftermath = "");

// `where`: "in config 3/10 (n=4) after run 5", "before config 3/10 (n=4)"...; `cut_short`: the
// config whose runs stopped part way (nullptr when the sweep stopped between configs).
SweepInterrupted sweep_interrupted(const Aggregator& aggregator, const SessionInfo& session, const Settings& settings,
                                   const Config* cut_short, const std::string& where);

// "config 3/10 (n=4)"
std::string config_label(const Config& config, std::size_t config_count);

}  // namespace kscope::detail

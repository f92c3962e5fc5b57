#include "core/outcome.hpp"

#include <memory>

#include "core/caller.hpp"
#include "core/exception_message.hpp"

namespace kscope::detail {

Results final_results(const Aggregator& aggregator, const SessionInfo& session, const Settings& settings,
                      std::size_t config_count) {
  Results results = [&] {
    try {
      return aggregator.results(session, true);
    } catch (...) {
      throw sweep_failure(aggregator, session, settings, config_count, nullptr, "", std::current_exception());
    }
  }();
  if (!settings.output_prefix.empty()) results.write_all(settings.output_prefix);
  return results;
}

SweepError sweep_failure(const Aggregator& aggregator, const SessionInfo& session, const Settings& settings,
                         std::size_t config_count, const Config* config, const std::string& what,
                         std::exception_ptr cause, const std::string& aftermath) {
  auto partial = std::make_shared<const Results>(aggregator.results(session, false));
  const std::string context =
      config ? "config " + std::to_string(config->index() + 1) + "/" + std::to_string(config_count) + " (" +
                   config->to_string() + ") failed in " + what
             : "all configs ran, but the results could not be normalized";
  std::string message = context + ": " + exception_message(cause) + aftermath + "\n" +
                        std::to_string(partial->rows().size()) + " summary rows measured before it are kept in " +
                        spell("SweepError::partial_results()", "the error's partial_results");
  if (!settings.output_prefix.empty()) {
    try {
      partial->write_all(settings.output_prefix);
      message += " and written to " + settings.output_prefix + "{summary.csv,samples.csv,results.json}";
    } catch (const std::exception& e) {
      message += std::string("; writing them to files failed: ") + e.what();  // the sweep's own error stays
    }
  }
  return SweepError(message, config ? config->to_string() : "", cause, partial);
}

}  // namespace kscope::detail

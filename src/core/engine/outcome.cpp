#include "core/engine/outcome.hpp"

#include <memory>

#include "base/text.hpp"
#include "core/model/attribution.hpp"
#include "core/model/caller_language.hpp"
#include "core/model/exception_message.hpp"
#include "core/files/output_formats.hpp"

namespace kscope::detail {
namespace {

// Results that a stopped sweep keeps: written to the output prefix when there is one. Returns
// what the message says about them.
std::string keep(const Results& kept, const Settings& settings, const std::string& holder) {
  std::string message = counted(kept.rows().size(), "summary row") + " measured before it " + (kept.rows().size() == 1 ? "is" : "are") + " kept in " + holder;
  if (!settings.output_prefix.empty()) {
    try {
      kept.write_all(settings.output_prefix);
      message += " and written to " + result_files_text(settings.output_prefix);
    } catch (const std::exception& e) {
      message += std::string("; writing them to files failed: ") + e.what();  // the sweep's own error stays
    }
  }
  return message;
}

}  // namespace

std::string config_label(const Config& config, std::size_t config_count) {
  return "config " + std::to_string(config.index() + 1) + "/" + std::to_string(config_count) + " (" +
         cut(config.to_string(), 200) + ")";
}

Results final_results(const Aggregator& aggregator, const SessionInfo& session, const Settings& settings,
                      std::size_t config_count, bool samples_on_disk,
                      const std::vector<std::string>& written_after) {
  Results results = [&] {
    try {
      return aggregator.results(session, true);
    } catch (...) {
      throw sweep_failure(aggregator, session, settings, config_count, nullptr, "", std::current_exception());
    }
  }();
  if (settings.output_prefix.empty()) return results;
  try {
    write_result_files(results, settings.output_prefix, samples_on_disk, written_after);
  } catch (const std::exception& e) {
    // Measured is measured: the results travel with the error instead of being lost with the file.
    auto complete = std::make_shared<const Results>(std::move(results));
    throw SweepError("all configs ran, but writing the results to " + result_files_text(settings.output_prefix) +
                         " failed: " + e.what() + "\nall " +
                         counted(complete->rows().size(), "summary row") + (complete->rows().size() == 1 ? " is" : " are") +
                         " kept in " +
                         spell("SweepError::partial_results()", "the error's partial_results"),
                     "", std::current_exception(), complete);
  }
  return results;
}

SweepError sweep_failure(const Aggregator& aggregator, const SessionInfo& session, const Settings& settings,
                         std::size_t config_count, const Config* config, std::string what,
                         std::exception_ptr cause, const std::string& aftermath) {
  // A callable of the caller's that threw: named in the message, its own exception the cause.
  try {
    std::rethrow_exception(cause);
  } catch (const CallbackFailure& failure) {
    what += ", in " + failure.callback();
    cause = failure.cause();
  } catch (...) {
  }
  auto partial = std::make_shared<const Results>(aggregator.results(session, false));
  const std::string context = config ? config_label(*config, config_count) + " failed in " + what
                                     : "all configs ran, but the results could not be normalized";
  const std::string message = context + ": " + exception_message(cause) + aftermath + "\n" +
                              keep(*partial, settings, spell("SweepError::partial_results()", "the error's partial_results"));
  return SweepError(message, config ? config->to_string() : "", cause, partial);
}

SweepInterrupted sweep_interrupted(const Aggregator& aggregator, const SessionInfo& session, const Settings& settings,
                                   const Config* cut_short, const std::string& where) {
  auto partial = std::make_shared<const Results>(aggregator.results(session, false));
  std::string message = "sweep interrupted (Ctrl-C, SIGINT) " + where + "\n" +
                        keep(*partial, settings,
                             spell("SweepInterrupted::partial_results()", "the exception's partial_results"));
  if (!settings.output_prefix.empty())
    message += "; to measure the rest, run the sweep again with " + option("resume") + spell(" = true", "=True");
  return SweepInterrupted(message, cut_short ? cut_short->to_string() : "", partial);
}

}  // namespace kscope::detail

#include "backends/ncu/child_session.hpp"

#include <cstdio>
#include <cstdlib>

#include "backends/ncu/child_backend.hpp"
#include "backends/ncu/error_kinds.hpp"
#include "backends/ncu/ncu_command.hpp"
#include "core/model/exception_message.hpp"
#include "core/model/log.hpp"
#include "core/engine/request_checks.hpp"
#include "core/engine/session.hpp"
#include "kscope/errors.hpp"

namespace kscope::ncu {
namespace {

ManifestError describe(std::exception_ptr error) {
  ManifestError e{error_kind(error), detail::exception_message(error), "", ""};
  try {
    std::rethrow_exception(error);
  } catch (const SweepError& sweep) {
    // The parent rebuilds the SweepError; the child's partial results hold only placeholders.
    e.message = detail::exception_message(sweep.cause());
    e.failed_config = sweep.failed_config();
    e.cause_kind = error_kind(sweep.cause());
  } catch (...) {
  }
  return e;
}

}  // namespace

void run_child_session(const Sweep& sweep, const Settings& settings, const Body& body, const ChildTarget& target) {
  ChildBackend backend(requested_metrics(settings));
  ChildManifest manifest;
  try {
    if (session_key(sweep, settings) != target.key) {
      throw ConfigError("profile() call #" + std::to_string(target.ordinal) +
                        " of the program re-run under Nsight Compute has another sweep or other settings than in "
                        "the original run. The ncu backend re-runs the whole program and profiles the same call "
                        "again, so the program must make the same profile() calls, in the same order, every time "
                        "it runs: do not derive sweeps or settings from the time, random numbers or input");
    }
    Settings child = settings;
    child.clock_control = ClockControl::none;  // ncu holds the clocks (--clock-control)
    child.sampling = Sampling::fixed;
    child.thermal_mode = ThermalMode::off;
    child.output_prefix.clear();  // the parent writes the results
    detail::check_backend_measures(child, backend);
    detail::Session(sweep.configs(), child, body, backend).run();
    manifest = backend.manifest();
  } catch (...) {
    manifest = backend.manifest();
    manifest.error = describe(std::current_exception());
  }
  int code = manifest.error ? 1 : 0;
  try {
    write_manifest(manifest, target.manifest_path);
  } catch (const std::exception& e) {
    detail::log_warning(e.what());
    code = 1;
  }
  std::fflush(nullptr);
  std::_Exit(code);
}

}  // namespace kscope::ncu

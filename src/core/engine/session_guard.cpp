#include "core/engine/session_guard.hpp"

#include <atomic>

#include "core/model/caller_language.hpp"
#include "kscope/errors.hpp"

namespace kscope::detail {
namespace {
std::atomic<bool> g_in_session{false};
}

SessionGuard::SessionGuard() {
  if (g_in_session.exchange(true)) {
    throw ConfigError(spell("profile() was called while another profile() is running",
                            "a profiled function was called while another profiled call is running") +
                      " (from the body or another thread); profiling sessions cannot be nested or run "
                      "concurrently: make the calls one after the other");
  }
}

SessionGuard::~SessionGuard() { g_in_session.store(false); }

}  // namespace kscope::detail

#include "core/model/interrupt_scope.hpp"

#include <atomic>
#include <csignal>

namespace kscope::detail {
namespace {

std::atomic<bool> g_requested{false};  // lock-free: safe to set from a signal handler
static_assert(std::atomic<bool>::is_always_lock_free);
struct sigaction g_previous;

void on_sigint(int) {
  g_requested.store(true);
  sigaction(SIGINT, &g_previous, nullptr);  // async-signal-safe: the next Ctrl-C is handled as before
}

}  // namespace

InterruptScope::InterruptScope() {
  g_requested.store(false);
  struct sigaction action {};
  action.sa_handler = on_sigint;
  action.sa_flags = SA_RESTART;  // the body's blocking calls go on as if no signal had come
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, &g_previous);
}

InterruptScope::~InterruptScope() { sigaction(SIGINT, &g_previous, nullptr); }

void request_interrupt() noexcept { g_requested.store(true); }

bool interrupt_requested() noexcept { return g_requested.load(); }

}  // namespace kscope::detail

#include "core/control/clock_lock.hpp"

#include <atomic>
#include <csignal>

namespace kscope::detail {
namespace {

constexpr int kSignals[] = {SIGINT, SIGTERM, SIGHUP};
std::atomic<DeviceControl*> g_locked{nullptr};
struct sigaction g_previous[sizeof kSignals / sizeof kSignals[0]];

void restore_then_reraise(int signal) {
  // Not async-signal-safe in theory (NVML takes locks), but leaving the clocks locked for every
  // later user of the GPU is the worse failure.
  if (DeviceControl* device = g_locked.exchange(nullptr)) device->restore_clocks();
  for (std::size_t i = 0; i < std::size(kSignals); ++i)
    if (kSignals[i] == signal) sigaction(signal, &g_previous[i], nullptr);
  std::raise(signal);
}

}  // namespace

ClockLock::ClockLock(DeviceControl& device) : device_(device), locked_(device.lock_base_clocks()) {
  g_locked.store(&device_);
  struct sigaction action {};
  action.sa_handler = restore_then_reraise;
  sigemptyset(&action.sa_mask);
  for (std::size_t i = 0; i < std::size(kSignals); ++i) sigaction(kSignals[i], &action, &g_previous[i]);
}

ClockLock::~ClockLock() {
  for (std::size_t i = 0; i < std::size(kSignals); ++i) sigaction(kSignals[i], &g_previous[i], nullptr);
  if (g_locked.exchange(nullptr)) device_.restore_clocks();
}

}  // namespace kscope::detail

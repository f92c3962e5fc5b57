#pragma once
// Holds the GPU's clocks locked to base for one session and always gives them back: on scope exit
// (normal or exception) and on SIGINT/SIGTERM/SIGHUP, after which the signal's previous handling
// goes on. The lock is device-global and outlives the process if nobody resets it.
#include "kscope/measurement_backend.hpp"

namespace kscope::detail {

class ClockLock {
 public:
  explicit ClockLock(DeviceControl& device);  // throws BackendError when not permitted
  ~ClockLock();
  ClockLock(const ClockLock&) = delete;
  ClockLock& operator=(const ClockLock&) = delete;

  const ClockReading& locked_clocks() const { return locked_; }

 private:
  DeviceControl& device_;
  ClockReading locked_;
};

}  // namespace kscope::detail

#pragma once
// Ctrl-C during a sweep. While an InterruptScope lives (one per session, installed after the clock
// lock), the first SIGINT only asks the session to stop: it finishes the run in progress, keeps and
// writes what was measured, and raises SweepInterrupted. The handler that was there before (the
// clock lock's, a Python interpreter's, the default) is back as soon as that first SIGINT arrives,
// so a second Ctrl-C acts as it would without kscope.
#include "kscope/detail/interrupt.hpp"  // request_interrupt, for the front ends

namespace kscope::detail {

class InterruptScope {
 public:
  InterruptScope();   // installs the handler; no interrupt requested yet
  ~InterruptScope();  // puts the previous handler back
  InterruptScope(const InterruptScope&) = delete;
  InterruptScope& operator=(const InterruptScope&) = delete;
};

bool interrupt_requested() noexcept;

}  // namespace kscope::detail

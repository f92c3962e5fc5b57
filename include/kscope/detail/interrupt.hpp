#pragma once
// Ctrl-C seen by a front end's own signal handling (the Python module, on a KeyboardInterrupt).
namespace kscope::detail {

// Asks the session in progress to stop after its current run, as the first SIGINT does.
void request_interrupt() noexcept;

}  // namespace kscope::detail

#pragma once
// One profiling session at a time per process: CUPTI has one client per process and one range
// profiler per context, and annotations reach the one session in progress. Every entry point
// (profile(), profile_with_backend()) holds the guard for the whole call.
namespace kscope::detail {

class SessionGuard {
 public:
  SessionGuard();  // throws ConfigError while another session is in progress
  ~SessionGuard();
  SessionGuard(const SessionGuard&) = delete;
  SessionGuard& operator=(const SessionGuard&) = delete;
};

}  // namespace kscope::detail

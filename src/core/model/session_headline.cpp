#include "kscope/detail/session_headline.hpp"

namespace kscope::detail {

std::string session_headline(const SessionInfo& s) {
  return (s.gpu.empty() ? std::string("GPU unknown") : s.gpu) + " | backend " + to_string(s.backend) +
         " | cache_control " + to_string(s.cache_control) + " | clock_control " + to_string(s.clock_control);
}

std::string session_headline_with_machine(const SessionInfo& s) {
  std::string text = session_headline(s);
  if (!s.driver_version.empty()) text += " | driver " + s.driver_version;
  if (!s.host.empty()) text += " | host " + s.host;
  return text;
}

}  // namespace kscope::detail

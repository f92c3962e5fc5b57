#include "kscope/detail/session_headline.hpp"

namespace kscope::detail {

std::string session_headline(const SessionInfo& s) {
  return (s.gpu.empty() ? std::string("GPU unknown") : s.gpu) + " | backend " + to_string(s.backend) +
         " | cache_control " + to_string(s.cache_control) + " | clock_control " + to_string(s.clock_control);
}

}  // namespace kscope::detail

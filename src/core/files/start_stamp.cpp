#include "core/files/start_stamp.hpp"

#include <cstdlib>
#include <ctime>

namespace kscope::detail {

void stamp_start(SessionInfo& info) {
  const std::time_t now = std::time(nullptr);
  std::tm local{};
  localtime_r(&now, &local);
  char text[40];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%S%z", &local);
  const std::string date = text;
  info.started_at = date.substr(0, date.size() - 2) + ":" + date.substr(date.size() - 2);  // +0100 -> +01:00
  double load[3] = {};
  if (getloadavg(load, 3) == 3) info.load_avg.assign(load, load + 3);
}

}  // namespace kscope::detail

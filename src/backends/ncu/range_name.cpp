#include "backends/ncu/range_name.hpp"

#include <regex>

namespace kscope::ncu {

std::string range_name(const std::string& annotation, const RangeId& id) {
  return annotation + " [kscope:c" + std::to_string(id.config) + ":r" + std::to_string(id.run) + ":g" +
         std::to_string(id.region) + "]";
}

std::optional<RangeId> parse_range_id(const std::string& name) {
  static const std::regex marker(R"(\[kscope:c(\d{1,9}):r(\d{1,9}):g(\d{1,9})\])");
  std::optional<RangeId> last;
  for (std::sregex_iterator it(name.begin(), name.end(), marker), end; it != end; ++it) {
    const std::smatch& m = *it;
    last = RangeId{std::stoul(m[1]), std::stoul(m[2]), std::stoul(m[3])};
  }
  return last;
}

}  // namespace kscope::ncu

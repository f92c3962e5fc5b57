#include "backends/ncu/ncu_version.hpp"

#include <regex>

namespace kscope::ncu {
namespace {

NcuVersion from_match(const std::smatch& m) {
  NcuVersion v;
  v.year = std::stoi(m[1]);
  v.minor = std::stoi(m[2]);
  v.patch = std::stoi(m[3]);
  v.build = m[4].matched ? std::stoi(m[4]) : 0;
  return v;
}

}  // namespace

std::string NcuVersion::to_string() const {
  return std::to_string(year) + "." + std::to_string(minor) + "." + std::to_string(patch) + "." +
         std::to_string(build);
}

std::optional<NcuVersion> parse_ncu_version(const std::string& version_output) {
  static const std::regex pattern(R"(Version\s+(\d{1,6})\.(\d{1,6})\.(\d{1,6})(?:\.(\d{1,9}))?)");
  std::smatch m;
  if (!std::regex_search(version_output, m, pattern)) return std::nullopt;
  return from_match(m);
}

std::optional<NcuVersion> parse_version_number(const std::string& text) {
  static const std::regex pattern(R"((\d{1,6})\.(\d{1,6})\.(\d{1,6})(?:\.(\d{1,9}))?)");
  std::smatch m;
  if (!std::regex_match(text, m, pattern)) return std::nullopt;
  return from_match(m);
}

}  // namespace kscope::ncu

#include "backends/ncu/child_target.hpp"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <regex>

#include "kscope/errors.hpp"

namespace kscope::ncu {
namespace {

constexpr const char* kTargetVariable = "KSCOPE_NCU_TARGET";
constexpr const char* kManifestVariable = "KSCOPE_NCU_MANIFEST";

}  // namespace

std::optional<ChildTarget> child_target_from_environment() {
  const char* target = std::getenv(kTargetVariable);
  if (target == nullptr) return std::nullopt;
  static const std::regex form(R"((\d{1,9}):([0-9a-f]{16}))");
  std::cmatch m;
  const char* manifest = std::getenv(kManifestVariable);
  if (!std::regex_match(target, m, form) || manifest == nullptr || *manifest == '\0') {
    throw BackendError(std::string(kTargetVariable) + "='" + target + "' (with " + kManifestVariable + "='" +
                       (manifest ? manifest : "") +
                       "') is not what kscope's ncu backend sets for the process it profiles; unset both variables");
  }
  return ChildTarget{std::stoul(m[1]), m[2], manifest};
}

std::vector<std::string> child_environment(const ChildTarget& target) {
  return {std::string(kTargetVariable) + "=" + std::to_string(target.ordinal) + ":" + target.key,
          std::string(kManifestVariable) + "=" + target.manifest_path};
}

std::string session_key(const Sweep& sweep, const Settings& settings) {
  std::string text = to_string(settings.backend) + "|" + std::to_string(settings.runs) + "|" +
                     std::to_string(settings.warmup_runs) + "|" + to_string(settings.replay_mode) + "|" +
                     to_string(settings.cache_control) + "|" + to_string(settings.clock_control) + "|";
  for (const auto& m : settings.metrics) text += m + ",";
  for (const auto& c : sweep.configs()) text += "\n" + c.to_string();
  std::uint64_t hash = 1469598103934665603ull;
  for (unsigned char c : text) hash = (hash ^ c) * 1099511628211ull;
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(hash));
  return hex;
}

}  // namespace kscope::ncu

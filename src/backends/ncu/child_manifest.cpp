#include "backends/ncu/child_manifest.hpp"

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "base/file_access.hpp"
#include "base/json_error.hpp"
#include "kscope/errors.hpp"

namespace kscope::ncu {
namespace {

using nlohmann::json;

constexpr int kFormat = 1;

}  // namespace

void write_manifest(const ChildManifest& manifest, const std::string& path) {
  json runs = json::array();
  for (const auto& r : manifest.runs) {
    json regions = json::array();
    for (const auto& g : r.regions) regions.push_back({{"name", g.name}, {"failed", g.failed}, {"reason", g.reason}});
    runs.push_back({{"config", r.config}, {"run", r.run}, {"regions", std::move(regions)}});
  }
  json doc{{"kscope_ncu_manifest", kFormat}, {"runs", std::move(runs)}, {"error", nullptr}};
  if (const auto& e = manifest.error) {
    doc["error"] = {{"kind", e->kind}, {"message", e->message}, {"failed_config", e->failed_config},
                    {"cause_kind", e->cause_kind}};
  }
  detail::write_whole(path, doc.dump(1));
}

std::optional<ChildManifest> read_manifest(const std::string& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  try {
    const json doc = json::parse(in);
    if (doc.at("kscope_ncu_manifest").get<int>() != kFormat) throw BackendError("unknown manifest format");
    ChildManifest m;
    for (const auto& r : doc.at("runs")) {
      ManifestRun run{r.at("config").get<std::size_t>(), r.at("run").get<std::size_t>(), {}};
      for (const auto& g : r.at("regions"))
        run.regions.push_back({g.at("name").get<std::string>(), g.at("failed").get<bool>(), g.at("reason").get<std::string>()});
      m.runs.push_back(std::move(run));
    }
    if (const auto& e = doc.at("error"); !e.is_null()) {
      m.error = ManifestError{e.at("kind").get<std::string>(), e.at("message").get<std::string>(),
                              e.at("failed_config").get<std::string>(), e.at("cause_kind").get<std::string>()};
    }
    return m;
  } catch (const std::exception& e) {
    throw BackendError("the ncu child manifest " + path + " is unreadable (" + detail::json_error_text(e) +
                       "); it is written by kscope in the profiled child process: re-run the sweep");
  }
}

}  // namespace kscope::ncu

#include "backends/ncu/ncu_locator.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <sstream>

#include "backends/ncu/subprocess.hpp"
#include "core/model/backend_choice.hpp"
#include "kscope/errors.hpp"

namespace kscope::ncu {
namespace {

namespace fs = std::filesystem;

bool executable(const std::string& path) {
  std::error_code ec;
  return fs::is_regular_file(path, ec) && access(path.c_str(), X_OK) == 0;
}

std::string env(const char* name) {
  const char* value = std::getenv(name);
  return value ? value : "";
}

// <root>/<version>/ncu for every version directory, newest first.
std::vector<std::string> installed_versions(const std::string& root) {
  std::vector<std::pair<NcuVersion, std::string>> found;
  std::error_code ec;
  for (fs::directory_iterator it(root, ec), end; !ec && it != end; it.increment(ec)) {
    if (auto v = parse_version_number(it->path().filename().string()))
      found.emplace_back(*v, (it->path() / "ncu").string());
  }
  std::sort(found.begin(), found.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  std::vector<std::string> paths;
  for (auto& f : found) paths.push_back(std::move(f.second));
  return paths;
}

std::string first_line_with(const std::string& text, const std::string& word) {
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    if (line.find(word) != std::string::npos) return line;
  return {};
}

}  // namespace

NcuSearch NcuSearch::from_environment() {
  NcuSearch s;
  s.explicit_path = env("KSCOPE_NCU");
  s.path_variable = env("PATH");
  return s;
}

std::string find_ncu(const NcuSearch& search, std::vector<std::string>* tried) {
  std::vector<std::string> candidates;
  if (!search.explicit_path.empty()) {
    candidates.push_back(search.explicit_path);
  } else {
    std::istringstream dirs(search.path_variable);
    for (std::string dir; std::getline(dirs, dir, ':');)
      if (!dir.empty()) candidates.push_back(dir + "/ncu");
    candidates.insert(candidates.end(), search.fixed_paths.begin(), search.fixed_paths.end());
    for (auto& p : installed_versions(search.install_root)) candidates.push_back(std::move(p));
  }
  for (const auto& c : candidates) {
    if (tried) tried->push_back(c);
    if (executable(c)) return c;
  }
  return {};
}

NcuProbe probe_ncu(const NcuSearch& search) {
  NcuProbe probe;
  std::vector<std::string> tried;
  probe.path = find_ncu(search, &tried);
  if (probe.path.empty()) {
    probe.problem = search.explicit_path.empty()
                        ? "the Nsight Compute CLI (ncu) was not found on PATH, in /usr/local/cuda/bin or under " +
                              search.install_root +
                              ": install Nsight Compute (it comes with the CUDA toolkit), put its ncu on PATH, or "
                              "set KSCOPE_NCU=/path/to/ncu"
                        : "KSCOPE_NCU=" + search.explicit_path +
                              " is not an executable file: point it to the ncu program, or unset it to search PATH";
    return probe;
  }
  try {
    const CapturedRun run = run_captured({probe.path, "--version"});
    probe.version_line = first_line_with(run.output, "Version");
    probe.version = parse_ncu_version(run.output);
    if (!probe.version) {
      probe.problem = "'" + probe.path + " --version' exited with " + std::to_string(run.exit_code) +
                      " and printed no version (\"Version 2025.3.1.0 ...\"): " +
                      (run.output.empty() ? std::string("no output") : run.output.substr(0, 300)) +
                      "; check the installation or set KSCOPE_NCU to a working ncu";
      return probe;
    }
  } catch (const Error& e) {
    probe.problem = e.what();
    return probe;
  }
  if (*probe.version < kMinimumNcuVersion) {
    probe.problem = "ncu " + probe.version->to_string() + " at " + probe.path + " is older than " +
                    kMinimumNcuVersion.to_string() +
                    ", the oldest Nsight Compute kscope supports (the release it is tested with): install Nsight "
                    "Compute " + kMinimumNcuVersion.to_string() +
                    " or newer (CUDA 13.0 ships it) and put it first on PATH, or set KSCOPE_NCU to it";
  }
  return probe;
}

NcuProbe require_ncu() {
  NcuProbe probe = probe_ncu();
  if (!probe.problem.empty()) throw BackendError(detail::backend_choice(Backend::ncu) + " cannot run: " + probe.problem);
  return probe;
}

}  // namespace kscope::ncu

#include "python_command.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>

// Set by CMake where the Python package is built (KSCOPE_BUILD_PYTHON).
#ifndef KSCOPE_PYTHON_EXECUTABLE
#define KSCOPE_PYTHON_EXECUTABLE "python3"
#endif
#ifndef KSCOPE_BUILD_PYTHON_DIR
#define KSCOPE_BUILD_PYTHON_DIR ""
#endif

namespace {

namespace fs = std::filesystem;

bool holds_package(const fs::path& dir) {
  std::error_code ec;
  return !dir.empty() && fs::is_regular_file(dir / "kscope" / "__init__.py", ec);
}

// The directory to put first on PYTHONPATH, or "" to leave the interpreter's own search path.
std::string package_dir() {
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (!ec && holds_package(self.parent_path().parent_path().parent_path()))  // <site>/kscope/bin/kscope
    return self.parent_path().parent_path().parent_path().string();
  if (holds_package(KSCOPE_BUILD_PYTHON_DIR)) return KSCOPE_BUILD_PYTHON_DIR;
  return "";
}

}  // namespace

int python_command(const std::string& command, const std::vector<std::string>& args) {
  const char* chosen = std::getenv("KSCOPE_PYTHON");
  const std::string python = chosen != nullptr && *chosen != '\0' ? chosen : KSCOPE_PYTHON_EXECUTABLE;
  if (const std::string dir = package_dir(); !dir.empty()) {
    const char* path = std::getenv("PYTHONPATH");
    const std::string value = path != nullptr && *path != '\0' ? dir + ":" + path : dir;
    setenv("PYTHONPATH", value.c_str(), 1);
  }
  std::vector<std::string> argv{python, "-m", "kscope", command};
  argv.insert(argv.end(), args.begin(), args.end());
  std::vector<char*> raw;
  for (std::string& a : argv) raw.push_back(a.data());
  raw.push_back(nullptr);
  std::fflush(stdout);
  execvp(python.c_str(), raw.data());
  std::fprintf(stderr,
               "kscope %s runs in Python, and the interpreter '%s' cannot be started (%s): set KSCOPE_PYTHON to "
               "the Python that has kscope's package (python3 -c 'import kscope' works with it)\n",
               command.c_str(), python.c_str(), std::strerror(errno));
  return 1;
}

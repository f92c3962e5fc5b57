#include "backends/ncu/program_command.hpp"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <regex>

#include "core/model/backend_choice.hpp"
#include "kscope/errors.hpp"

namespace kscope::ncu {
namespace {

namespace fs = std::filesystem;

bool is_python(const std::string& executable) {
  static const std::regex name(R"((python|pypy)[0-9.]*[a-z]*)");
  return std::regex_match(fs::path(executable).filename().string(), name);
}

std::string base_name(const std::string& path) { return fs::path(path).filename().string(); }

// Python's own command line (python3 [options] [-c cmd | -m module | script | -] [args]).
std::string python_rerun_problem(const std::string& interpreter, const std::vector<std::string>& args) {
  const std::string py = base_name(interpreter);
  bool interactive = false;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "-") return "a Python interpreter reading its program from stdin (" + py + " -)";
    if (a == "--") {
      if (i + 1 >= args.size()) break;
      return interactive ? "an interactive Python session (" + py + " -i)" : std::string();
    }
    if (a.size() < 2 || a[0] != '-') {
      if (interactive) return "an interactive Python session (" + py + " -i " + a + ")";
      const std::string script = base_name(a);
      if (script.rfind("ipython", 0) == 0 || script.rfind("jupyter", 0) == 0)
        return "an IPython or Jupyter session (" + script + ")";
      return {};
    }
    if (a.rfind("--", 0) == 0) {
      if (a == "--check-hash-based-pycs") ++i;  // the one long option with a separate value
      continue;
    }
    for (std::size_t c = 1; c < a.size(); ++c) {
      const char flag = a[c];
      const bool value_follows = c + 1 == a.size();
      if (flag == 'c') return "a Python command string (" + py + " -c ...)";
      if (flag == 'm') {
        const std::string module = value_follows ? (i + 1 < args.size() ? args[i + 1] : "") : a.substr(c + 1);
        if (module.rfind("ipykernel", 0) == 0 || module.rfind("colab_kernel", 0) == 0)
          return "a Jupyter kernel (" + py + " -m " + module + ")";
        if (module.rfind("IPython", 0) == 0) return "an IPython session (" + py + " -m " + module + ")";
        return interactive ? "an interactive Python session (" + py + " -i -m " + module + ")" : std::string();
      }
      if (flag == 'i') interactive = true;
      if (flag == 'W' || flag == 'X') {
        if (value_follows) ++i;
        break;
      }
    }
  }
  return "an interactive Python interpreter (" + py + " without a script)";
}

}  // namespace

std::vector<std::string> ProgramCommand::command_line() const {
  std::vector<std::string> cmd{executable};
  cmd.insert(cmd.end(), arguments.begin(), arguments.end());
  return cmd;
}

std::string invoked_executable(const std::string& argv0, const std::string& exe, const std::string& path_env) {
  std::vector<fs::path> candidates;
  if (argv0.find('/') != std::string::npos) {
    candidates.push_back(argv0);
  } else if (!argv0.empty()) {
    for (std::size_t begin = 0; begin <= path_env.size();) {
      const std::size_t end = std::min(path_env.find(':', begin), path_env.size());
      candidates.push_back(fs::path(end > begin ? path_env.substr(begin, end - begin) : ".") / argv0);
      begin = end + 1;
    }
  }
  for (const auto& c : candidates) {
    std::error_code ec;
    if (fs::equivalent(c, exe, ec) && !ec) return fs::absolute(c, ec).lexically_normal().string();
  }
  return exe;
}

ProgramCommand current_program() {
  ProgramCommand program;
  std::error_code ec;
  program.executable = fs::read_symlink("/proc/self/exe", ec).string();
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  if (ec || !in)
    throw BackendError(detail::backend_choice(Backend::ncu) + " re-runs this program under Nsight Compute and needs /proc/self/exe and "
                       "/proc/self/cmdline to know its command line, but they cannot be read here (Linux with /proc "
                       "is required)");
  const std::string raw((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::size_t start = raw.find('\0');
  const char* path_env = std::getenv("PATH");
  program.executable = invoked_executable(raw.substr(0, start), program.executable, path_env ? path_env : "");
  while (start != std::string::npos && start + 1 < raw.size()) {
    const std::size_t end = raw.find('\0', start + 1);
    program.arguments.push_back(raw.substr(start + 1, end == std::string::npos ? std::string::npos : end - start - 1));
    start = end;
  }
  return program;
}

std::string rerun_problem(const ProgramCommand& program) {
  return is_python(program.executable) ? python_rerun_problem(program.executable, program.arguments) : std::string();
}

}  // namespace kscope::ncu

#include "command_line.hpp"

#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>

namespace kscope::cli {
namespace {

// The first argument before "--" that starts with '-', is none of the app's options, and names a file.
std::optional<std::string> dash_led_file(const CLI::App& app, const std::vector<std::string>& args) {
  for (const std::string& arg : args) {
    if (arg == "--") break;
    if (arg.size() < 2 || arg[0] != '-' || app.get_option_no_throw(arg.substr(0, arg.find('='))) ||
        arg == "--help" || arg == "-h" || arg == "--version")
      continue;
    struct stat status {};
    if (::stat(arg.c_str(), &status) == 0) return arg;
  }
  return std::nullopt;
}

}  // namespace

std::optional<int> parse(CLI::App& app, const std::vector<std::string>& args, std::ostream& out, std::ostream& err,
                         const std::string& usage) {
  const std::string& name = app.get_name();
  std::vector<const char*> argv{name.c_str()};
  for (const auto& a : args) argv.push_back(a.c_str());
  app.allow_extras();  // named below, in order (CLI11 2.1 lists them reversed)
  const auto bad_usage = [&](const std::string& what) {
    err << name << ": " << what << "\n" << usage;
    return kUsageError;
  };
  // A file whose name starts with '-' reads as an option, as in every Unix tool: -- ends the options.
  if (const auto file = dash_led_file(app, args))
    return bad_usage("unknown option '" + *file + "'; to name the file '" + *file +
                     "', put -- before the file names: " + name + " [OPTIONS] -- " + *file + " ...");
  try {
    app.parse(static_cast<int>(argv.size()), argv.data());
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success)) return app.exit(e, out, err);
    return bad_usage(e.what());
  }
  for (const auto& extra : app.remaining()) {
    if (extra == "--") continue;
    return bad_usage(extra.size() > 1 && extra[0] == '-' ? "unknown option '" + extra + "'"
                                                          : "unexpected argument '" + extra + "'");
  }
  return std::nullopt;
}

int flushed(int status) {
  errno = 0;
  std::cout.flush();
  if (std::fflush(stdout) == 0 && !std::ferror(stdout) && std::cout) return status;
  const int error = errno;
  std::fprintf(stderr, "kscope: cannot write the output: %s\n", error ? std::strerror(error) : "write error");
  return kOutputError;
}

}  // namespace kscope::cli

#include "command_line.hpp"

#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>

namespace kscope::cli {

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
  try {
    app.parse(static_cast<int>(argv.size()), argv.data());
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success)) return app.exit(e, out, err);
    return bad_usage(e.what());
  }
  for (const auto& extra : app.remaining()) {
    if (extra == "--") continue;
    if (extra.size() < 2 || extra[0] != '-') return bad_usage("unexpected argument '" + extra + "'");
    struct stat status {};
    // A file whose name starts with '-' reads as an option, as in every Unix tool: -- ends the options.
    const bool a_file = ::stat(extra.c_str(), &status) == 0;
    return bad_usage("unknown option '" + extra + "'" +
                     (a_file ? "; to name the file '" + extra + "', put -- before the file names: " + name +
                                   " [OPTIONS] -- " + extra + " ..."
                             : std::string()));
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

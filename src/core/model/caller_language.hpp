#pragma once
// Messages name options and fixes in the language of the code that called kscope: a C++ caller
// reads `Settings::runs`, a Python caller `runs`. The Python package declares itself at import;
// the kscope program's commands declare themselves while they run: their own flags, and the plain
// names of the results files they read (`runs`, as Python spells them) for the rest.
#include <string>

#include "kscope/detail/caller.hpp"

namespace kscope::detail {

// An option by its Settings field name: "Settings::thermal_wait_c" for C++, "thermal_wait" (the
// keyword of kscope.analyze.kernel, whose names differ for a few fields) for Python and the command line.
std::string option(const std::string& settings_field);
// One of two spellings of a value or a fix, for the caller's language (the command line: Python's).
std::string spell(const std::string& cpp, const std::string& python);
// One of three: a fix the command line words in its own terms (`kscope doctor`, a flag).
std::string spell(const std::string& cpp, const std::string& python, const std::string& command_line);

}  // namespace kscope::detail

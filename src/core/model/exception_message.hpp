#pragma once
// The message of any caught exception, for messages that wrap it.
#include <exception>
#include <string>

namespace kscope::detail {

// what() of a std::exception, "a non-standard exception" for anything else.
std::string exception_message(std::exception_ptr error);

}  // namespace kscope::detail

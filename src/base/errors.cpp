// The errors src/base throws (kscope/errors.hpp), defined where they are thrown: base uses nothing of core's.
#include "kscope/errors.hpp"

namespace kscope {

FileError::FileError(const std::string& message, std::string path, std::error_code code)
    : Error(message), path_(std::move(path)), code_(code) {}

}  // namespace kscope

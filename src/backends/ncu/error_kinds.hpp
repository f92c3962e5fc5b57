#pragma once
// kscope's error classes by name, so an error raised in the child process under ncu reaches the
// caller in the parent as the same class (and, through the Python bindings, the same Python class).
#include <exception>
#include <string>

namespace kscope::ncu {

// "SweepError", "CudaError", "BackendError", "AnnotationUseError", "KernelCountError", "AnnotationError",
// "ConfigError", "ThermalError", "Error", or "exception" for anything else.
std::string error_kind(std::exception_ptr error);

// An exception of the class `kind` names (Error for an unknown name) carrying `message`.
std::exception_ptr make_error(const std::string& kind, const std::string& message);

}  // namespace kscope::ncu

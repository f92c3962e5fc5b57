// Errors across the border: Python exceptions raised in code the engine calls, as engine errors
// (the engine's errors become Python's in errors.cpp).
#pragma once

#include <pybind11/pybind11.h>

#include <exception>
#include <string>

#include "kscope/detail/interrupt.hpp"

namespace kscope_python {

namespace py = pybind11;

// An engine message as Python text: bytes that are not UTF-8 (a file's content quoted in it) are
// shown as \xNN escapes instead of failing the message with a UnicodeDecodeError.
py::str message(const std::exception& e);

// An exception raised by Python code the engine called (the body, derive_metric, the combine
// rule). The engine's messages quote what(): "ValueError: bad size", without the traceback that
// pybind11's what() appends (the Python exception, kept as the SweepError's __cause__, has it).
class PythonError : public py::error_already_set {
 public:
  explicit PythonError(const py::error_already_set& e);
  const char* what() const noexcept override { return message_.c_str(); }

 private:
  std::string message_;
};

// Calls Python code from the engine (with the GIL). A KeyboardInterrupt there is Ctrl-C reaching
// Python's own handler (it came before the session's handler, or it is a second Ctrl-C): the
// sweep stops, as interrupted rather than failed.
template <typename Call>
auto call_python(Call&& call) {
  try {
    return call();
  } catch (const py::error_already_set& e) {
    if (e.matches(PyExc_KeyboardInterrupt)) kscope::detail::request_interrupt();
    throw PythonError(e);
  }
}

}  // namespace kscope_python

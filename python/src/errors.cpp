// The engine's errors and messages in Python: each kscope error as its class of kscope.errors (a
// failed sweep carrying what it measured, the user's own exception as its cause), and the engine's
// log through warnings.warn and sys.stderr.
#include <memory>
#include <string>
#include <vector>

#include "bindings.hpp"
#include "kscope/detail/caller.hpp"
#include "kscope/detail/log_sink.hpp"
#include "kscope/kscope.hpp"
#include "python_errors.hpp"

namespace kscope_python {

namespace {

template <typename E>
bool is(const std::exception& e) {
  return dynamic_cast<const E*>(&e) != nullptr;
}

// The one mapping of kscope's C++ errors to the Python classes of kscope.errors, most derived first
// (_core.error_classes() lists it; FileError is OSError, by its errno: os_error below).
struct ErrorClass {
  bool (*matches)(const std::exception&);
  const char* python_class;
};
constexpr ErrorClass kErrorClasses[] = {
    {is<kscope::SweepError>, "SweepError"},
    {is<kscope::CudaError>, "CudaError"},
    {is<kscope::BackendError>, "BackendError"},
    {is<kscope::AnnotationUseError>, "AnnotationUseError"},
    {is<kscope::KernelCountError>, "KernelCountError"},
    {is<kscope::AnnotationError>, "AnnotationError"},
    {is<kscope::ConfigError>, "ConfigError"},
    {is<kscope::ThermalError>, "ThermalError"},
    {is<kscope::InternalError>, "InternalError"},
    {is<kscope::Error>, "ProfilerException"},
};

py::object error_class(const std::exception& e) {
  const py::module_ errors = py::module_::import("kscope.errors");
  for (const ErrorClass& c : kErrorClasses)
    if (c.matches(e)) return errors.attr(c.python_class);
  return py::reinterpret_borrow<py::object>(PyExc_RuntimeError);
}

// A file that cannot be read or written is Python's OSError, of the subclass its errno selects
// (FileNotFoundError, IsADirectoryError, PermissionError...), as open() raises it.
py::object os_error(const kscope::FileError& e) {
  const py::object os_error_class = py::reinterpret_borrow<py::object>(PyExc_OSError);
  if (!e.code()) return os_error_class(message(e));
  return os_error_class(e.code().value(), message(e));
}

std::string describe(const py::error_already_set& e) {  // with the GIL
  const std::string type = py::str(e.type().attr("__name__"));
  const std::string text = py::str(e.value());
  return text.empty() ? type : type + ": " + text;
}

// The exception that stopped a sweep, as a Python exception instance: the user's own exception
// object when the body (or a callback) raised in Python.
py::object python_exception(std::exception_ptr cause) {
  try {
    std::rethrow_exception(cause);
  } catch (py::error_already_set& e) {
    py::object value = e.value();
    // Where in the body it was raised: the traceback travels with the exception (the message has none).
    const auto traceback = py::reinterpret_steal<py::object>(PyException_GetTraceback(value.ptr()));
    if (e.trace() && !traceback) PyException_SetTraceback(value.ptr(), e.trace().ptr());
    return value;
  } catch (const kscope::FileError& e) {
    return os_error(e);
  } catch (const std::exception& e) {
    return error_class(e)(message(e));
  } catch (...) {
    return py::reinterpret_borrow<py::object>(PyExc_RuntimeError)("a non-standard C++ exception");
  }
}

void raise(const py::object& instance) {
  PyErr_SetObject(reinterpret_cast<PyObject*>(Py_TYPE(instance.ptr())), instance.ptr());
}

// kscope.SweepInterrupted carrying what was measured: a _core.Results, or a _core.Evaluation.
void raise_interrupted(const kscope::SweepInterrupted& e, const py::object& partial) {
  const py::module_ errors = py::module_::import("kscope.errors");
  raise(errors.attr("SweepInterrupted")(message(e), e.interrupted_config(), partial));
}

void raise_sweep_error(const kscope::SweepError& e, const py::object& partial) {
  py::object cause = python_exception(e.cause());
  // Ctrl-C and SystemExit stay what they are: they must not become an ordinary Exception.
  if (!PyObject_IsInstance(cause.ptr(), PyExc_Exception)) return raise(cause);
  // Also an instance of the cause's built-in class, which Nsight Python lets through.
  const py::object sweep_error = py::module_::import("kscope.errors").attr("sweep_error_for")(cause);
  py::object error = sweep_error(message(e), e.failed_config(), partial);
  PyException_SetCause(error.ptr(), cause.release().ptr());  // steals the reference
  raise(error);
}

void translate(std::exception_ptr p) {
  try {
    if (p) std::rethrow_exception(p);
  } catch (const kscope::EvaluationInterrupted& e) {
    raise_interrupted(e, py::cast(e.partial_evaluation()));
  } catch (const kscope::SweepInterrupted& e) {
    raise_interrupted(e, py::cast(e.partial_results()));
  } catch (const kscope::EvaluationError& e) {
    raise_sweep_error(e, py::cast(e.partial_evaluation()));
  } catch (const kscope::SweepError& e) {
    raise_sweep_error(e, py::cast(e.partial_results()));
  } catch (const kscope::FileError& e) {
    raise(os_error(e));
  } catch (const kscope::Error& e) {
    raise(error_class(e)(message(e)));
  }
}

// The engine's messages in Python (kscope._console): warnings through warnings.warn in kscope's
// categories, so that filters, catch_warnings and -W error see them; information and progress
// through sys.stderr, so that notebooks and contextlib.redirect_stderr capture them.
class PythonConsole final : public kscope::detail::LogSink {
 public:
  void warning(kscope::detail::WarningKind kind, const std::string& message) override {
    py::gil_scoped_acquire gil;
    const char* category = kind == kscope::detail::WarningKind::run ? "run" : "setup";
    call_python([&] { console().attr("warn")(category, message); });  // -W error: the warning raises
  }
  void line(kscope::detail::LogLevel, const std::string& text) override { write(text + "\n"); }
  void write(const std::string& text) override {
    py::gil_scoped_acquire gil;
    try {
      console().attr("write")(text);
    } catch (const py::error_already_set&) {  // a console that cannot be written loses the text, not the sweep
    }
  }
  bool is_terminal() override {
    py::gil_scoped_acquire gil;
    try {
      return console().attr("is_terminal")().cast<bool>();
    } catch (const py::error_already_set&) {
      return false;
    }
  }

 private:
  static py::object console() { return py::module_::import("kscope._console"); }
};

}  // namespace

py::str message(const std::exception& e) {
  const std::string text = e.what();
  return py::reinterpret_steal<py::str>(
      PyUnicode_DecodeUTF8(text.data(), static_cast<Py_ssize_t>(text.size()), "backslashreplace"));
}

PythonError::PythonError(const py::error_already_set& e) : py::error_already_set(e), message_(describe(e)) {}

void bind_errors(py::module_& m) {
  py::register_exception_translator(translate);
  m.def("error_classes", [] {
    std::vector<std::string> names;
    for (const ErrorClass& c : kErrorClasses) names.emplace_back(c.python_class);
    return names;
  }, "The classes of kscope.errors the engine's errors become, most derived first");
}

// The engine's messages name Python options and fixes from now on, and reach Python's warnings
// and sys.stderr; the sink goes before the interpreter does.
void bind_console(py::module_&) {
  kscope::detail::set_caller(kscope::detail::Caller::python);
  // Not make_shared: its type tag is an STB_GNU_UNIQUE symbol, which the module must not export
  // (python/CMakeLists.txt says why).
  kscope::detail::set_log_sink(std::shared_ptr<PythonConsole>(new PythonConsole));
  py::module_::import("atexit").attr("register")(py::cpp_function([] { kscope::detail::set_log_sink(nullptr); }));
}

}  // namespace kscope_python

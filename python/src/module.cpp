// kscope._core: the engine for Python. The Python package decides what to run (configs, options,
// callables); this module hands it to kscope::profile and hands back the engine's tables. The GIL is
// released while the engine runs and taken again only to call back into Python, so Python threads
// (data loaders, worker threads launching kernels inside a region) keep running during a sweep.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "kscope/backend_registry.hpp"
#include "kscope/columns.hpp"
#include "kscope/compare.hpp"
#include "kscope/detail/annotation_access.hpp"
#include "kscope/detail/caller.hpp"
#include "kscope/detail/collector_names.hpp"
#include "kscope/detail/config_cells.hpp"
#include "kscope/detail/enum_names.hpp"
#include "kscope/detail/files.hpp"
#include "kscope/detail/interrupt.hpp"
#include "kscope/detail/log_sink.hpp"
#include "kscope/detail/result_files.hpp"
#include "kscope/detail/settings_fields.hpp"
#include "kscope/doctor.hpp"
#include "kscope/kscope.hpp"
#include "kscope/metrics.hpp"
#include "kscope/testing.hpp"

namespace py = pybind11;

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

// An engine message as Python text: bytes that are not UTF-8 (a file's content quoted in it) are
// shown as \xNN escapes instead of failing the message with a UnicodeDecodeError.
py::str message(const std::exception& e) {
  const std::string text = e.what();
  return py::reinterpret_steal<py::str>(
      PyUnicode_DecodeUTF8(text.data(), static_cast<Py_ssize_t>(text.size()), "backslashreplace"));
}

// A file that cannot be read or written is Python's OSError, of the subclass its errno selects
// (FileNotFoundError, IsADirectoryError, PermissionError...), as open() raises it.
py::object os_error(const kscope::FileError& e) {
  const py::object os_error_class = py::reinterpret_borrow<py::object>(PyExc_OSError);
  if (!e.code()) return os_error_class(message(e));
  return os_error_class(e.code().value(), message(e));
}

// An exception raised by Python code the engine called (the body, derive_metric, the combine
// rule). The engine's messages quote what(): "ValueError: bad size", without the traceback that
// pybind11's what() appends (the Python exception, kept as the SweepError's __cause__, has it).
class PythonError : public py::error_already_set {
 public:
  explicit PythonError(const py::error_already_set& e) : py::error_already_set(e), message_(describe(e)) {}
  const char* what() const noexcept override { return message_.c_str(); }

 private:
  static std::string describe(const py::error_already_set& e) {  // with the GIL
    const std::string type = py::str(e.type().attr("__name__"));
    const std::string text = py::str(e.value());
    return text.empty() ? type : type + ": " + text;
  }
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

// A collector's value, which the Python side made None, bool, int, float or str.
kscope::Cell to_cell(const py::handle& v) {
  if (v.is_none()) return {};
  if (PyBool_Check(v.ptr())) return v.cast<bool>();
  if (PyLong_Check(v.ptr())) return static_cast<std::int64_t>(v.cast<long long>());
  if (PyFloat_Check(v.ptr())) return v.cast<double>();
  return v.cast<std::string>();
}

kscope::CollectionScope scope_named(const std::string& scope) {
  for (const auto& [value, name] : kscope::detail::enum_names(kscope::CollectionScope{}))
    if (name == scope) return value;
  throw kscope::InternalError("no collection scope '" + scope + "' (kscope bug: please report it with this message)");
}

kscope::Value to_value(const py::handle& v) {
  // bool before int: Python's bool is an int.
  if (PyBool_Check(v.ptr())) return kscope::Value(v.cast<bool>());
  if (PyLong_Check(v.ptr())) return kscope::Value(v.cast<long long>());
  if (PyFloat_Check(v.ptr())) return kscope::Value(v.cast<double>());
  if (PyUnicode_Check(v.ptr())) return kscope::Value(v.cast<std::string>());
  throw py::type_error("a sweep value must be int, float, str or bool, not " +
                       std::string(Py_TYPE(v.ptr())->tp_name));
}

// Explicit configs (one row per config) are one zipped group; no names means one empty config.
kscope::Sweep make_sweep(const std::vector<std::string>& names, const py::list& rows) {
  kscope::Sweep sweep;
  if (names.empty()) return sweep;
  std::vector<std::vector<kscope::Value>> values;
  for (const auto& row : rows) {
    std::vector<kscope::Value> cells;
    for (const auto& v : row) cells.push_back(to_value(v));
    values.push_back(std::move(cells));
  }
  sweep.zip(names, std::move(values));
  return sweep;
}

py::object to_python(const kscope::Cell& cell) {
  return std::visit(
      [](const auto& v) -> py::object {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, std::monostate>) return py::none();
        else return py::cast(v);
      },
      cell);
}

// {column: [cells]} in the table's column order, and the config index of every row.
py::tuple columns(const kscope::Table& table, std::vector<std::size_t> config_indices) {
  py::dict out;
  for (std::size_t c = 0; c < table.columns.size(); ++c) {
    py::list cells;
    for (const auto& row : table.rows) cells.append(to_python(row[c]));
    out[py::str(table.columns[c])] = cells;
  }
  return py::make_tuple(out, config_indices);
}

std::vector<std::size_t> config_indices(const std::vector<kscope::SummaryRow>& rows) {
  std::vector<std::size_t> out;
  for (const auto& r : rows) out.push_back(r.config_index);
  return out;
}

std::vector<std::size_t> config_indices(const kscope::Samples& samples) {
  std::vector<std::size_t> out;
  for (std::size_t i = 0; i < samples.size(); ++i) out.push_back(samples.config_index(i));
  return out;
}

py::object optional_index(const std::optional<std::size_t>& index) {
  return index ? py::object(py::int_(*index)) : py::object(py::none());
}

// kscope.compare's engine call: ({column: [cells]}, baseline and candidate config index per row
// (None on the side a row is missing from), warnings, gate). directions: {metric: "lower"|"higher"|"undefined"}.
py::tuple run_compare(const kscope::Results& baseline, const kscope::Results& candidate, kscope::CompareOptions options,
                      const std::map<std::string, std::string>& directions) {
  static const std::map<std::string, kscope::MetricDirection> names{
      {"lower", kscope::MetricDirection::lower_is_better},
      {"higher", kscope::MetricDirection::higher_is_better},
      {"undefined", kscope::MetricDirection::undefined}};
  for (const auto& [metric, direction] : directions) options.directions[metric] = names.at(direction);
  const kscope::Comparison comparison = [&] {
    py::gil_scoped_release release;  // the bootstrap takes a moment and touches no Python object
    return kscope::compare(baseline, candidate, options);
  }();
  py::list baseline_configs, candidate_configs;
  for (const auto& r : comparison.rows) {
    baseline_configs.append(optional_index(r.baseline.config_index));
    candidate_configs.append(optional_index(r.candidate.config_index));
  }
  return py::make_tuple(py::object(columns(comparison.to_table(), {})[0]), baseline_configs, candidate_configs,
                        comparison.warnings, kscope::to_string(comparison.gate()));
}

// progress(event, dict) for the notebook's progress display. Per-run calls are throttled here, so
// that microsecond bodies do not take the GIL for nothing. A KeyboardInterrupt raised in it (a
// notebook interrupt landing there) stops the sweep after the run just finished, as one in the body.
kscope::ProgressObserver progress_observer(PyObject* fn) {
  constexpr double min_interval_s = 0.2;
  // Not make_shared: its type tag is an STB_GNU_UNIQUE symbol, which the module must not export
  // (python/CMakeLists.txt says why).
  std::shared_ptr<double> last_call(new double(-min_interval_s));
  return [fn, last_call](const kscope::SweepProgress& p) {
    using E = kscope::SweepProgress::Event;
    if (p.event == E::run_finished && p.elapsed_s - *last_call < min_interval_s) return;
    *last_call = p.elapsed_s;
    static constexpr const char* names[] = {"config_started", "run_finished", "config_finished", "sweep_finished"};
    py::gil_scoped_acquire gil;
    py::dict d(py::arg("config_index") = p.config_index, py::arg("total_configs") = p.total_configs,
               py::arg("config_text") = p.config_text, py::arg("config_runs_done") = p.config_runs_done,
               py::arg("runs_per_config") = p.runs_per_config, py::arg("runs_done") = p.runs_done,
               py::arg("elapsed_s") = p.elapsed_s,
               py::arg("eta_s") = p.eta_s ? py::object(py::float_(*p.eta_s)) : py::object(py::none()));
    try {
      py::reinterpret_borrow<py::function>(fn)(names[static_cast<int>(p.event)], d);
    } catch (const py::error_already_set& e) {
      if (!e.matches(PyExc_KeyboardInterrupt)) throw PythonError(e);
      kscope::detail::request_interrupt();
    }
  };
}

// work(annotation, config index) -> None or (bytes, flops, precision, tensor_cores), checked in Python.
kscope::DeclaredWork declared_work(PyObject* fn, const std::vector<std::string>& annotations) {
  return kscope::DeclaredWork::of(
      [fn](const std::string& annotation, const kscope::Config& config) -> std::optional<kscope::Work> {
        py::gil_scoped_acquire gil;
        return call_python([&]() -> std::optional<kscope::Work> {
          const py::object out = py::reinterpret_borrow<py::function>(fn)(annotation, config.index());
          if (out.is_none()) return std::nullopt;
          const auto t = out.cast<py::tuple>();
          const auto kind = kscope::parse_flop_kind(t[2].cast<std::string>() + (t[3].cast<bool>() ? " tensor" : ""));
          if (!kind) throw kscope::InternalError("the Python side passed an unknown FLOP kind (kscope bug: please report it)");
          return kscope::Work{t[0].cast<double>(), t[1].cast<double>(), *kind};
        });
      },
      annotations);
}

// body(config index) as the engine's Body. A Ctrl-C that Python's handler saw while the engine ran
// (the GIL released) lets the run complete; the sweep stops after it.
kscope::Body python_body(const py::function& body) {
  PyObject* body_fn = body.ptr();
  return [body_fn](const kscope::Config& config) {
    py::gil_scoped_acquire gil;
    call_python([&] { py::reinterpret_borrow<py::function>(body_fn)(config.index()); });
    if (PyErr_CheckSignals() != 0) {
      if (!PyErr_ExceptionMatches(PyExc_KeyboardInterrupt)) throw PythonError(py::error_already_set());
      PyErr_Clear();
      kscope::detail::request_interrupt();
    }
  };
}

// Callbacks hold borrowed pointers: the Python objects outlive profile() (the caller's frame keeps
// them), and copying a raw pointer needs no GIL when the engine copies the std::function.
kscope::Results run_profile(const std::vector<std::string>& names, const py::list& rows,
                            const kscope::Settings& base, const py::function& body,
                            const py::object& derive, const py::object& combine,
                            const std::vector<std::tuple<std::string, std::string, py::function>>& collectors,
                            kscope::testing::SimulatedBackend* simulated, const py::object& progress,
                            const py::object& work, const std::vector<std::string>& work_annotations) {
  const kscope::Sweep sweep = make_sweep(names, rows);
  kscope::Settings settings = base;
  const kscope::Body call_body = python_body(body);
  if (!derive.is_none()) {
    PyObject* fn = derive.ptr();
    // The Python side returns [(name, value, unit), ...] whatever shape the user's function returned.
    settings.derive_metric = [fn](const kscope::MeasuredValues& measured, const kscope::Config& config) {
      py::gil_scoped_acquire gil;
      return call_python([&] {
        py::object out = py::reinterpret_borrow<py::function>(fn)(measured.values(), config.index());
        std::vector<kscope::DerivedValue> derived;
        for (const auto& item : out) {
          auto t = item.cast<py::tuple>();
          derived.push_back({t[0].cast<std::string>(), t[1].cast<double>(), t[2].cast<std::string>()});
        }
        return derived;
      });
    };
  }
  if (!combine.is_none()) {
    PyObject* fn = combine.ptr();
    settings.combine_kernel_metrics = [fn](double a, double b) {
      py::gil_scoped_acquire gil;
      return call_python([&] { return py::reinterpret_borrow<py::function>(fn)(a, b).cast<double>(); });
    };
  }
  for (const auto& [name, scope, call] : collectors) {
    // call(config index or None, annotation) -> None, bool, int, float or str
    PyObject* fn = call.ptr();
    settings.info_collectors.push_back({name, scope_named(scope), [fn](const kscope::CollectionContext& c) {
      py::gil_scoped_acquire gil;
      const py::object config = c.config ? py::object(py::int_(c.config->index())) : py::none();
      return call_python([&] { return to_cell(py::reinterpret_borrow<py::function>(fn)(config, c.annotation)); });
    }});
  }
  if (!work.is_none()) settings.work = declared_work(work.ptr(), work_annotations);
  if (!progress.is_none()) settings.progress_observer = progress_observer(progress.ptr());
  py::gil_scoped_release release;
  return simulated ? kscope::profile_with_backend(sweep, settings, call_body, *simulated)
                   : kscope::profile(sweep, settings, call_body);
}

// kscope.tune's engine call: races the configs rows with body(config index).
kscope::Race run_tune(const std::vector<std::string>& names, const py::list& rows, const kscope::Settings& base,
                      const kscope::RaceOptions& options, const py::function& body,
                      kscope::testing::SimulatedBackend* simulated, const py::object& progress) {
  const kscope::Sweep sweep = make_sweep(names, rows);
  kscope::Settings settings = base;
  const kscope::Body call_body = python_body(body);
  if (!progress.is_none()) settings.progress_observer = progress_observer(progress.ptr());
  py::gil_scoped_release release;
  return simulated ? kscope::tune_with_backend(sweep, settings, call_body, options, *simulated)
                   : kscope::tune(sweep, settings, call_body, options);
}

// ---- kscope.evaluate -----------------------------------------------------------------------------
// The Python side (kscope/_evaluate.py) makes every Tensors as (views, owner, observed): views
// [(address, shape, dtype name, "device" | "host")], the Python object whose life keeps their memory,
// and [(finding name, detail)] seen of the call.

// The engine holds `owner` as long as it needs the views; released with the GIL.
std::shared_ptr<const void> kept_alive(py::object owner) {
  return std::shared_ptr<const void>(new py::object(std::move(owner)), [](py::object* o) {
    py::gil_scoped_acquire gil;
    delete o;
  });
}

kscope::Tensors to_tensors(const py::handle& made) {
  const auto parts = made.cast<py::tuple>();
  kscope::Tensors t;
  for (const auto& item : parts[0]) {
    const auto v = item.cast<py::tuple>();
    const auto dtype = kscope::dtype_named(v[2].cast<std::string>());
    if (!dtype) throw kscope::InternalError("the Python side passed an unknown dtype (kscope bug: please report it)");
    t.views.push_back({reinterpret_cast<const void*>(v[0].cast<std::uintptr_t>()), v[1].cast<std::vector<std::int64_t>>(),
                       *dtype, v[3].cast<std::string>() == "device" ? kscope::MemorySpace::device
                                                                    : kscope::MemorySpace::host});
  }
  t.owner = kept_alive(py::reinterpret_borrow<py::object>(parts[1]));
  for (const auto& item : parts[2]) {
    const auto o = item.cast<py::tuple>();
    const auto finding = kscope::finding_named(o[0].cast<std::string>());
    if (!finding) throw kscope::InternalError("the Python side passed an unknown finding (kscope bug: please report it)");
    t.observed.push_back({*finding, o[1].cast<std::string>()});
  }
  return t;
}

const py::object& owner_of(const kscope::Tensors& t) { return *static_cast<const py::object*>(t.owner.get()); }

// inputs(config index, seed), reference(inputs owner), candidate(inputs owner): each -> (views, owner,
// observed); stream() -> the caller's stream as an integer.
kscope::Evaluation run_evaluate(const std::vector<std::string>& names, const py::list& rows,
                                const kscope::Settings& base, const kscope::EvaluateOptions& options,
                                const py::function& inputs, const py::function& reference,
                                const py::function& candidate, const py::function& stream,
                                kscope::testing::SimulatedBackend* simulated, const py::object& progress,
                                const py::object& work) {
  const kscope::Sweep sweep = make_sweep(names, rows);
  kscope::Settings settings = base;
  kscope::Contest contest;
  PyObject* make = inputs.ptr();
  contest.inputs = [make](const kscope::Config& config, std::uint64_t seed) {
    py::gil_scoped_acquire gil;
    return call_python([&] { return to_tensors(py::reinterpret_borrow<py::function>(make)(config.index(), seed)); });
  };
  const auto side = [](PyObject* fn) {
    return [fn](const kscope::Tensors& in) {
      py::gil_scoped_acquire gil;
      return call_python([&] { return to_tensors(py::reinterpret_borrow<py::function>(fn)(owner_of(in))); });
    };
  };
  contest.reference = side(reference.ptr());
  contest.candidate = side(candidate.ptr());
  PyObject* stream_fn = stream.ptr();
  contest.caller_stream = [stream_fn] {
    py::gil_scoped_acquire gil;
    return call_python([&] { return py::reinterpret_borrow<py::function>(stream_fn)().cast<std::uintptr_t>(); });
  };
  if (!work.is_none()) settings.work = declared_work(work.ptr(), {});
  if (!progress.is_none()) settings.progress_observer = progress_observer(progress.ptr());
  py::gil_scoped_release release;
  return simulated ? kscope::evaluate_with_backend(sweep, settings, contest, options, *simulated)
                   : kscope::evaluate(sweep, settings, contest, options);
}

// kscope.annotate's handle on one open region. close() ends it now. Python collecting it while
// open (an annotate object entered and dropped without __exit__) fails the run with an
// AnnotationError: the region ended wherever the collector happened to run.
class Region {
 public:
  explicit Region(const std::string& name)
      : name_(name), annotation_(std::make_unique<kscope::Annotation>(name)) {}
  ~Region() {
    if (!annotation_) return;
    py::gil_scoped_release release;  // closing may wait for the backend; no Python object is touched
    kscope::detail::AnnotationAccess::abandon(
        *annotation_, "annotation '" + name_ + "' was entered but never exited: Python collected its "
                      "kscope.annotate object while the region was open, so the region ended at an unknown "
                      "point. Use it as 'with kscope.annotate(\"" + name_ + "\"):', or call __exit__ on the same "
                      "object");
  }
  Region(const Region&) = delete;
  Region& operator=(const Region&) = delete;
  void close() { annotation_.reset(); }
  void mark_failed(const std::string& reason) {
    if (annotation_) annotation_->mark_failed(reason);
  }

 private:
  std::string name_;
  std::unique_ptr<kscope::Annotation> annotation_;
};

}  // namespace

py::list column_specs(const std::vector<kscope::ColumnSpec>& columns) {
  py::list out;
  for (const auto& c : columns) out.append(py::make_tuple(c.name, kscope::to_string(c.type)));
  return out;
}

// Backends by name (kscope/backend.hpp), each registered one under its name as an attribute too
// (Backend.cupti), and the registry's definitions, from which Python's backend= choices come.
void bind_backends(py::module_& m) {
  py::class_<kscope::Backend> backend(m, "Backend");
  backend.def_property_readonly("name", [](kscope::Backend b) { return kscope::to_string(b); })
      .def_static("named", [](const std::string& name) { return kscope::Backend::named(name); }, py::arg("name"),
                  "The registered backend of this name; ConfigError naming the registered ones")
      .def("__eq__", [](kscope::Backend a, kscope::Backend b) { return a == b; }, py::is_operator())
      .def("__hash__", [](kscope::Backend b) { return py::hash(py::str(kscope::to_string(b))); })
      .def("__repr__", [](kscope::Backend b) { return "Backend.named('" + kscope::to_string(b) + "')"; });
  for (const kscope::Backend b : kscope::registered_backends())
    if (const py::str name(kscope::to_string(b)); name.attr("isidentifier")().cast<bool>()) backend.attr(name) = b;
  using kscope::BackendDefinition;
  py::class_<BackendDefinition>(m, "BackendDefinition")
      .def_property_readonly("backend", [](const BackendDefinition& d) { return kscope::Backend::named(d.name); })
      .def_readonly("name", &BackendDefinition::name)
      .def_readonly("python_name", &BackendDefinition::python_name, "backend= in Python; empty where it is not one")
      .def_readonly("summary", &BackendDefinition::summary)
      .def_readonly("default_metrics", &BackendDefinition::default_metrics);
  m.def("backends", [] {
    std::vector<const BackendDefinition*> out;
    for (const kscope::Backend b : kscope::registered_backends()) out.push_back(&kscope::definition(b));
    return out;
  }, py::return_value_policy::reference, "The backend registry's definitions, in its order");
}

// An engine enumeration with its members named as the engine names them (kscope/detail/enum_names.hpp);
// a name that is a Python keyword gets a trailing underscore (InfoCollectorErrors.raise_).
template <typename E>
void bind_enum(py::module_& m, const char* name) {
  py::enum_<E> bound(m, name);
  const py::object is_keyword = py::module_::import("keyword").attr("iskeyword");
  for (const auto& [value, engine_name] : kscope::detail::enum_names(E{}))
    bound.value(is_keyword(engine_name).template cast<bool>() ? (std::string(engine_name) + "_").c_str() : engine_name, value);
}

// Adaptive sampling's stopping rules by name (kscope/stopping_rule.hpp): AdaptiveSampling.criterion,
// and the names of the engine's table, which adaptive={'criterion': ...} accepts.
void bind_stop_criterion(py::module_& m) {
  py::class_<kscope::StopCriterion>(m, "StopCriterion")
      .def_property_readonly("name", [](kscope::StopCriterion c) { return kscope::to_string(c); })
      .def_static("named", [](const std::string& name) { return kscope::StopCriterion::named(name); }, py::arg("name"),
                  "The registered stopping rule of this name; ConfigError naming the registered ones")
      .def("__eq__", [](kscope::StopCriterion a, kscope::StopCriterion b) { return a == b; }, py::is_operator())
      .def("__hash__", [](kscope::StopCriterion c) { return py::hash(py::str(kscope::to_string(c))); })
      .def("__repr__", [](kscope::StopCriterion c) { return "StopCriterion.named('" + kscope::to_string(c) + "')"; });
  m.def("stopping_rules", [] {
    std::vector<std::string> names;
    for (const kscope::StopCriterion c : kscope::registered_stopping_rules()) names.push_back(kscope::to_string(c));
    return names;
  }, "The names of the engine's stopping rules, kscope's own first");
}

// The enumerations and parts of Settings.
void bind_settings_parts(py::module_& m) {
  bind_enum<kscope::CacheControl>(m, "CacheControl");
  bind_enum<kscope::ClockControl>(m, "ClockControl");
  bind_enum<kscope::ThermalMode>(m, "ThermalMode");
  bind_enum<kscope::ReplayMode>(m, "ReplayMode");
  bind_enum<kscope::Sampling>(m, "Sampling");
  bind_stop_criterion(m);
  bind_enum<kscope::ThrottledRuns>(m, "ThrottledRuns");
  py::class_<kscope::AdaptiveSampling>(m, "AdaptiveSampling")
      .def(py::init<>())
      .def_readwrite("criterion", &kscope::AdaptiveSampling::criterion)
      .def_readwrite("target_pct", &kscope::AdaptiveSampling::target_pct)
      .def_readwrite("min_runs", &kscope::AdaptiveSampling::min_runs)
      .def_readwrite("max_runs", &kscope::AdaptiveSampling::max_runs)
      .def_readwrite("config_budget_s", &kscope::AdaptiveSampling::config_budget_s)
      .def_readwrite("timeout_s", &kscope::AdaptiveSampling::timeout_s);
  py::class_<kscope::BoundThresholds>(m, "BoundThresholds")
      .def(py::init<>())
      .def_readwrite("memory_pct", &kscope::BoundThresholds::memory_pct)
      .def_readwrite("compute_pct", &kscope::BoundThresholds::compute_pct);
  bind_enum<kscope::InfoCollectorErrors>(m, "InfoCollectorErrors");
  bind_enum<kscope::Verbosity>(m, "Verbosity");
}

// Settings, the table of its fields, and its checks.
void bind_settings(py::module_& m) {
  // The plain-data part of kscope::Settings; callables are passed to profile() separately.
  py::class_<kscope::Settings>(m, "Settings")
      .def(py::init<>())
      .def_readwrite("runs", &kscope::Settings::runs)
      .def_readwrite("warmup_runs", &kscope::Settings::warmup_runs)
      .def_readwrite("backend", &kscope::Settings::backend)
      .def_readwrite("metrics", &kscope::Settings::metrics)
      .def_readwrite("replay_mode", &kscope::Settings::replay_mode)
      .def_readwrite("ncu_sections", &kscope::Settings::ncu_sections)
      .def_readwrite("cache_control", &kscope::Settings::cache_control)
      .def_readwrite("clock_control", &kscope::Settings::clock_control)
      .def_readwrite("thermal_mode", &kscope::Settings::thermal_mode)
      .def_readwrite("thermal_wait_c", &kscope::Settings::thermal_wait_c)
      .def_readwrite("thermal_cont_c", &kscope::Settings::thermal_cont_c)
      .def_readwrite("thermal_timeout_s", &kscope::Settings::thermal_timeout_s)
      .def_readwrite("sampling", &kscope::Settings::sampling)
      .def_readwrite("adaptive", &kscope::Settings::adaptive)
      .def_readwrite("throttled_runs", &kscope::Settings::throttled_runs)
      .def_readwrite("verbosity", &kscope::Settings::verbosity)
      .def_readwrite("ignore_kernel_list", &kscope::Settings::ignore_kernel_list)
      .def_readwrite("normalize_against", &kscope::Settings::normalize_against)
      .def_readwrite("info_collector_errors", &kscope::Settings::info_collector_errors)
      .def_readwrite("stable_rsd_pct", &kscope::Settings::stable_rsd_pct)
      .def_readwrite("bound_thresholds", &kscope::Settings::bound_thresholds)
      .def_readwrite("energy_window_s", &kscope::Settings::energy_window_s)
      .def_readwrite("output_prefix", &kscope::Settings::output_prefix)
      .def_readwrite("resume", &kscope::Settings::resume)
      .def_readwrite("overwrite", &kscope::Settings::overwrite)
      .def_readwrite("fsync_interval_s", &kscope::Settings::fsync_interval_s)
      .def_readwrite("device", &kscope::Settings::device)
      .def_property(
          "shard",
          [](const kscope::Settings& s) -> py::object {
            return s.shard ? py::object(py::make_tuple(s.shard->index, s.shard->count)) : py::none();
          },
          [](kscope::Settings& s, const std::optional<std::pair<std::size_t, std::size_t>>& shard) {
            if (shard) s.shard = kscope::Shard{shard->first, shard->second};
            else s.shard.reset();
          },
          "None, or (index, count)");

  m.def("settings_fields", [] {
    py::list out;
    for (const auto& f : kscope::detail::settings_field_infos())
      out.append(py::make_tuple(f.name, f.python_name, f.python_type, f.role, f.doc));
    return out;
  }, "[(name, python_name, python_type, role, doc)] of every Settings field, from the engine's one table; role: "
     "measurement (a resume and a merge must agree), summary (a merge must agree) or session");
  m.def("error_classes", [] {
    std::vector<std::string> names;
    for (const ErrorClass& c : kErrorClasses) names.emplace_back(c.python_class);
    return names;
  }, "The classes of kscope.errors the engine's errors become, most derived first");
  m.def("collection_scopes", [] {
    std::vector<std::string> names;
    for (const auto& [value, name] : kscope::detail::enum_names(kscope::CollectionScope{})) names.emplace_back(name);
    return names;
  }, "The info collectors' scopes, as the engine names them");
  m.def("result_files", &kscope::detail::result_files,
        "The file of each output format under an output prefix, in the order write_all writes them");
  m.def("chosen_backend", &kscope::chosen_backend, py::arg("settings"),
        "The backend these settings measure with (Backend.from_metrics: chosen from the metrics)");
  m.def("validate", [](kscope::Settings settings, const std::vector<std::pair<std::string, std::string>>& collectors) {
    // The collectors' callables are given at the call; their names and scopes are checked now.
    for (const auto& [name, scope] : collectors)
      settings.info_collectors.push_back(
          {name, scope_named(scope), [](const kscope::CollectionContext&) { return kscope::Cell{}; }});
    settings.validate();
  }, py::arg("settings"), py::arg("collectors"),
        "Raises ConfigError naming a bad option (or collector name: used twice, a column's) and its fix");
  m.def("check_collector_names", &kscope::detail::check_collector_names_against_axes, py::arg("collectors"),
        py::arg("parameters"), "Raises ConfigError for a collector named as one of the function's parameters");
}

void bind_columns(py::module_& m) {
  // The tables' columns after Annotation and the config axes: [(name, type)], type one of text,
  // integer, real, boolean, optional_boolean, baseline.
  m.def("summary_columns", [] { return column_specs(kscope::summary_columns()); });
  m.def("sample_columns", [] { return column_specs(kscope::sample_columns()); });
  m.def("console_columns", &kscope::console_columns, "[(column, short header)] of the readable view");
  m.def("roofline_console_columns", &kscope::roofline_console_columns,
        "[(column, short header)] the readable view adds for rows with declared work");
}

// What the backends measure: default and energy metrics, the counter backend's metric database.
void bind_metrics(py::module_& m) {
  m.def("default_metrics", &kscope::default_metrics, py::arg("backend"),
        "What the backend measures when metrics is empty");
  m.def("energy_metrics", [] {
    std::vector<std::string> names;
    for (const auto& m : kscope::energy_metrics()) names.push_back(m.name);
    return names;
  }, "The energy metrics' names: energy per run (J), average power (W), energy above idle (J)");
  m.def("is_energy_metric", &kscope::is_energy_metric, py::arg("name"));
  m.def("energy_efficiency", [](double energy_j, double flop, double bytes) {
    std::vector<std::tuple<std::string, double, std::string>> out;
    for (const auto& d : kscope::energy_efficiency(energy_j, flop, bytes)) out.emplace_back(d.name, d.value, d.unit);
    return out;
  }, py::arg("energy_j"), py::arg("flop"), py::arg("bytes"), "[(name, value, unit)] of FLOP/J and bytes/J");
  // The counter backend's metric database (CUPTI's host API: works offline with a chip name).
  m.def("list_metrics", [](const std::string& chip) {
    py::list out;
    for (const auto& m : kscope::list_metrics(chip))
      out.append(py::dict(py::arg("name") = m.name, py::arg("type") = kscope::to_string(m.type),
                          py::arg("unit") = m.unit, py::arg("hw_unit") = m.hw_unit,
                          py::arg("description") = m.description, py::arg("suffixes") = m.suffixes));
    return out;
  }, py::arg("chip") = "");
  m.def("describe_metric", [](const std::string& name, const std::string& chip) {
    const auto m = kscope::describe_metric(name, chip);
    return py::dict(py::arg("name") = m.name, py::arg("type") = kscope::to_string(m.type), py::arg("unit") = m.unit,
                    py::arg("hw_unit") = m.hw_unit, py::arg("description") = m.description);
  }, py::arg("name"), py::arg("chip") = "");
  m.def("count_passes", &kscope::count_passes, py::arg("metrics"), py::arg("chip") = "");
  m.def("sol_metrics", &kscope::sol_metrics,
        "The Speed-of-Light preset, in Nsight Compute's names: gpu__time_duration.sum and the compute, memory and DRAM\n"
        "throughputs in % of peak; the counters backend's default metrics, which ProfileResults.speed_of_light() reads.");
  m.def("bottleneck_rule", &kscope::bottleneck_rule,
        "The rule speed_of_light() applies, in words: the higher of compute and memory throughput decides when it\n"
        "reaches 60% of peak, else the kernel is latency-bound.");
  m.def("speed_of_light", [](const kscope::Results& r) { return py::object(columns(kscope::speed_of_light(r), {})[0]); },
        "{column: [cells]} of the Speed-of-Light table of counter results");
}

// Results, saved and loaded.
void bind_results(py::module_& m) {
  py::class_<kscope::Results>(m, "Results")
      .def("report_path", [](const kscope::Results& r) { return r.session().report_path; })
      .def("measured_metrics", [](const kscope::Results& r) { return r.session().metrics; },
           "The metrics the backend measured (the others are derived); empty for files from before kscope kept them")
      .def("summary", [](const kscope::Results& r) { return columns(r.summary_table(), config_indices(r.rows())); },
           "({column: [cells]}, [config index per row]) of the summary table")
      .def("samples", [](const kscope::Results& r) { return columns(r.samples_table(), config_indices(r.samples())); },
           "({column: [cells]}, [config index per row]) of the raw samples table")
      .def_property_readonly("axis_names", &kscope::Results::axis_names)
      .def("configs", [](const kscope::Results& r) {
        py::list out;
        for (const auto& c : r.configs()) {
          py::list values;
          for (const auto& v : c.values()) values.append(to_python(kscope::detail::to_cell(v)));
          out.append(py::tuple(values));
        }
        return out;
      }, "[tuple of the config's values (the engine's: int, float, str, bool)] in sweep order")
      .def("write_json", py::overload_cast<const std::string&>(&kscope::Results::write_json, py::const_), py::arg("path"))
      .def("write_all", &kscope::Results::write_all, py::arg("prefix"),
           ("Writes " + kscope::detail::result_files_text("<prefix>")).c_str())
      .def("to_json", [](const kscope::Results& r) {
        std::ostringstream out;
        r.write_json(out);
        return out.str();
      }, "The results file's text")
      .def("shard", [](const kscope::Results& r) -> py::object {
        const auto& s = r.settings().shard;
        return s ? py::object(py::make_tuple(s->index, s->count)) : py::none();
      }, "None, or the (index, count) of the shard these results hold")
      .def("shard_count", [](const kscope::Results& r) { return r.shard_sessions().size(); },
           "How many shards were merged into these results (0: measured by one process)")
      .def("write_gbench_json", &kscope::Results::write_gbench_json, py::arg("path"))
      .def("roofs", [](const kscope::Results& r, double sm_clock_mhz, double memory_clock_mhz) {
        const kscope::Roofs roofs = kscope::session_roofs(r.session(), sm_clock_mhz, memory_clock_mhz);
        py::dict tflops;
        for (const auto& kind : kscope::flop_kinds()) tflops[py::str(kscope::to_string(kind))] = roofs.flops_per_s(kind) / 1e12;
        return py::dict(py::arg("architecture") = kscope::architecture_name(roofs.compute_capability),
                        py::arg("sm_count") = roofs.sm_count, py::arg("sm_clock_mhz") = roofs.sm_clock_mhz,
                        py::arg("memory_clock_mhz") = roofs.memory_clock_mhz,
                        py::arg("dram_gbps") = roofs.dram_bytes_per_s / 1e9, py::arg("tflops") = tflops);
      }, py::arg("sm_clock_mhz"), py::arg("memory_clock_mhz"),
           "The session's device's roofs at these clocks (NaN: the rated ones): {architecture, sm_count, "
           "sm_clock_mhz, memory_clock_mhz, dram_gbps, tflops: {kind: TFLOP/s, NaN where it has none}}")
      .def("__len__", [](const kscope::Results& r) { return r.rows().size(); });

  m.def("write_file", [](const std::string& path, const std::string& text) { kscope::detail::write_whole(path, text); },
        py::arg("path"), py::arg("text"), py::call_guard<py::gil_scoped_release>(),
        "Writes text to path as kscope writes its files: whole, through symbolic links, never over a device");
  m.def("load_results", py::overload_cast<const std::string&>(&kscope::load_results), py::arg("path"),
        "Reads a file written by Results.write_json");
  m.def("results_from_json", [](const std::string& text, const std::string& name) {
    std::istringstream in(text);
    return kscope::load_results(in, name);
  }, py::arg("text"), py::arg("name"), "Results.to_json's text back as Results");
  m.def("geometric_mean", [](const std::vector<double>& v) { return kscope::geometric_mean(v); });
}

// Sharded sweeps: the shard of this process, and merging.
void bind_shards(py::module_& m) {
  m.def("shard_from_environment", [] {
    const auto launched = kscope::shard_from_environment();
    return launched ? py::object(py::make_tuple(launched->shard.index, launched->shard.count, launched->launcher,
                                                launched->local_rank))
                    : py::object(py::none());
  }, "None, or (index, count, launcher, local_rank) from KSCOPE_SHARD, torchrun or a Slurm job array");
  m.def("merge", [](const std::vector<kscope::Results>& shards) {
    std::vector<std::string> warnings;
    kscope::Results merged = kscope::merge(shards, &warnings);
    return py::make_tuple(std::move(merged), warnings);
  }, py::arg("shards"), "(merged Results, [warning]) of every shard of a sweep");
  m.def("merge_files", [](const std::vector<std::string>& inputs) {
    std::vector<std::string> warnings;
    kscope::Results merged = kscope::merge_files(inputs, &warnings);
    return py::make_tuple(std::move(merged), warnings);
  }, py::arg("inputs"), "(merged Results, [warning]) of shard results files or output prefixes");
  m.def("write_merged", &kscope::write_merged, py::arg("merged"), py::arg("prefix"), py::arg("overwrite"),
        py::arg("resumed"), py::call_guard<py::gil_scoped_release>(),
        "Writes merged results under prefix as a sweep writes its files: never over a sweep or an earlier "
        "merge unless overwrite (or resumed, for an earlier merge), never over a device");
}

void bind_compare(py::module_& m) {
  py::class_<kscope::CompareOptions>(m, "CompareOptions")
      .def(py::init<>())
      .def_readwrite("threshold_pct", &kscope::CompareOptions::threshold_pct)
      .def_readwrite("alpha", &kscope::CompareOptions::alpha)
      .def_readwrite("min_samples", &kscope::CompareOptions::min_samples)
      .def_readwrite("max_rsd_pct", &kscope::CompareOptions::max_rsd_pct)
      .def_readwrite("confidence", &kscope::CompareOptions::confidence)
      .def_readwrite("resamples", &kscope::CompareOptions::resamples)
      .def_readwrite("seed", &kscope::CompareOptions::seed);
  m.def("compare", &run_compare, py::arg("baseline"), py::arg("candidate"), py::arg("options"), py::arg("directions"));
}

// A profiling session: profile() and the regions a body opens.
void bind_sessions(py::module_& m) {
  m.def("profile", &run_profile, py::arg("names"), py::arg("rows"), py::arg("settings"), py::arg("body"),
        py::arg("derive"), py::arg("combine"), py::arg("collectors"), py::arg("simulated"),
        py::arg("progress") = py::none(), py::arg("work") = py::none(),
        py::arg("work_annotations") = std::vector<std::string>{},
        "Runs body(config_index) over the configs rows (one value per name) and returns the Results; "
        "progress(event, state), if given, replaces the progress on stderr");

  py::class_<Region>(m, "Region")
      .def(py::init<std::string>(), py::call_guard<py::gil_scoped_release>())
      .def("close", &Region::close, py::call_guard<py::gil_scoped_release>())
      .def("mark_failed", &Region::mark_failed);
}

void bind_tune(py::module_& m) {
  py::class_<kscope::RaceOptions>(m, "RaceOptions")
      .def(py::init<>())
      .def_readwrite("threshold_pct", &kscope::RaceOptions::threshold_pct)
      .def_readwrite("alpha", &kscope::RaceOptions::alpha)
      .def_readwrite("first_runs", &kscope::RaceOptions::first_runs)
      .def_readwrite("final_runs", &kscope::RaceOptions::final_runs)
      .def_readwrite("max_finalists", &kscope::RaceOptions::max_finalists)
      .def_readwrite("annotation", &kscope::RaceOptions::annotation)
      .def("validate", &kscope::RaceOptions::validate);
  py::class_<kscope::Race>(m, "Race")
      .def("table", [](const kscope::Race& r) {
        std::vector<std::size_t> indices;
        for (const auto& row : r.rows()) indices.push_back(row.config_index);
        return columns(r.table(), indices);
      }, "({column: [cells]}, [config index per row]) of the race table")
      .def("measurements", &kscope::Race::measurements, "Every recorded run of every round, as Results")
      .def("winner", &kscope::Race::winner, "The winner's config index")
      .def("ties", &kscope::Race::ties, "The tied configs' indices")
      .def("confidence", &kscope::Race::confidence)
      .def("options", [](const kscope::Race& r) { return r.options(); })
      .def("cost", [](const kscope::Race& r) {
        const kscope::RaceCost& c = r.cost();
        return py::dict(py::arg("runs") = c.runs, py::arg("exhaustive_runs") = c.exhaustive_runs,
                        py::arg("gpu_s") = c.gpu_s, py::arg("exhaustive_gpu_s") = c.exhaustive_gpu_s,
                        py::arg("wall_s") = c.wall_s);
      }, "{runs, exhaustive_runs, gpu_s, exhaustive_gpu_s, wall_s}")
      .def("rounds", [](const kscope::Race& r) {
        py::list out;
        for (const auto& round : r.rounds())
          out.append(py::dict(py::arg("kind") = round.kind, py::arg("configs") = round.configs,
                              py::arg("runs") = round.runs, py::arg("eliminated") = round.eliminated));
        return out;
      }, "[{kind, configs, runs, eliminated}] per round")
      .def("text", [](const kscope::Race& r) {
        std::ostringstream out;
        out << r;
        return out.str();
      }, "The race as the console shows it")
      .def("__len__", [](const kscope::Race& r) { return r.rows().size(); });
  m.def("tune", &run_tune, py::arg("names"), py::arg("rows"), py::arg("settings"), py::arg("options"), py::arg("body"),
        py::arg("simulated"), py::arg("progress") = py::none(),
        "Races the configs rows with body(config index); returns the Race");
}

void bind_evaluate(py::module_& m) {
  py::class_<kscope::EvaluateOptions>(m, "EvaluateOptions")
      .def(py::init<>())
      .def_readwrite("rtol", &kscope::EvaluateOptions::rtol)
      .def_readwrite("atol", &kscope::EvaluateOptions::atol)
      .def_readwrite("threshold_pct", &kscope::EvaluateOptions::threshold_pct)
      .def_readwrite("confidence", &kscope::EvaluateOptions::confidence)
      .def_readwrite("seed", &kscope::EvaluateOptions::seed)
      .def("validate", &kscope::EvaluateOptions::validate);
  const auto config_indices_of = [](const auto& rows) {
    std::vector<std::size_t> out;
    for (const auto& r : rows) out.push_back(r.config_index);
    return out;
  };
  py::class_<kscope::Evaluation>(m, "Evaluation")
      .def("table", [=](const kscope::Evaluation& e) { return columns(e.table(), config_indices_of(e.rows())); },
           "({column: [cells]}, [config index per row]) of the evaluation table")
      .def("findings", [=](const kscope::Evaluation& e) {
        return columns(e.findings_table(), config_indices_of(e.findings()));
      }, "({column: [cells]}, [config index per row]) of the findings")
      .def("measurements", &kscope::Evaluation::measurements, "The durations of both sides, as Results")
      .def("write_json", py::overload_cast<const std::string&>(&kscope::Evaluation::write_json, py::const_),
           py::arg("path"), py::call_guard<py::gil_scoped_release>())
      .def("to_json", [](const kscope::Evaluation& e) {
        std::ostringstream out;
        e.write_json(out);
        return out.str();
      })
      .def("options", [](const kscope::Evaluation& e) { return e.options(); })
      .def("__len__", [](const kscope::Evaluation& e) { return e.rows().size(); });
  m.def("evaluate", &run_evaluate, py::arg("names"), py::arg("rows"), py::arg("settings"), py::arg("options"),
        py::arg("inputs"), py::arg("reference"), py::arg("candidate"), py::arg("stream"), py::arg("simulated"),
        py::arg("progress") = py::none(), py::arg("work") = py::none(),
        "Evaluates candidate against reference over the configs rows; returns the Evaluation");
  m.def("load_evaluation", py::overload_cast<const std::string&>(&kscope::load_evaluation), py::arg("path"),
        py::call_guard<py::gil_scoped_release>(), "Reads a file written by Evaluation.write_json");
  m.def("findings", [] {
    py::list out;
    for (kscope::Finding f : kscope::all_findings())
      out.append(py::make_tuple(kscope::to_string(f), kscope::describe(f), kscope::attack_stopped(f)));
    return out;
  }, "[(name, what it means, the attack it stops)] of every evaluation finding");
  m.def("default_rtol", [](const std::string& dtype) {
    const auto d = kscope::dtype_named(dtype);
    if (!d) throw kscope::ConfigError("no dtype named '" + dtype + "'");
    return kscope::default_rtol(*d);
  }, py::arg("dtype"), "EvaluateOptions.rtol's default for a dtype named as NumPy and PyTorch name it");
}

void bind_doctor(py::module_& m) {
  // The environment doctor: JSON text (parsed on the Python side) and the readable report.
  m.def("doctor", [] {
    std::string json, text;
    {
      py::gil_scoped_release release;  // the probes take a moment and touch no Python object
      const kscope::DoctorReport report = kscope::run_doctor();
      json = kscope::to_json(report);
      text = kscope::to_text(report);
    }
    return py::make_tuple(json, text);
  });
}

void bind_testing(py::module_& m) {
  auto testing = m.def_submodule("testing", "The simulated backend of kscope's own tests (no measurement)");
  using kscope::testing::SimulatedBackend;
  py::class_<SimulatedBackend>(testing, "SimulatedBackend",
                               "A GPU that measures nothing: kernels of the durations launch() gives, on a simulated clock.\n"
                               "kscope.testing.simulated_backend() routes profiled calls to one; its methods set what its\n"
                               "device, clocks, power, noise and failures look like, for tests without a GPU.")
      .def(py::init<>())
      .def("launch", [](SimulatedBackend& b, const py::object& kernel_name, const py::object& duration_ns,
                        const py::object& gap_ns, std::uintptr_t stream) {
        // Checked here, so that a wrong type reads as this call's mistake, not as pybind11's overloads.
        if (!py::isinstance<py::str>(kernel_name))
          throw py::type_error("SimulatedBackend.launch(kernel_name, duration_ns): kernel_name must be a str, not " +
                               std::string(Py_TYPE(kernel_name.ptr())->tp_name));
        const auto nanoseconds = [](const py::object& v, const char* name) {
          const bool number = !PyBool_Check(v.ptr()) && (PyFloat_Check(v.ptr()) || PyLong_Check(v.ptr()) ||
                                                          PyObject_HasAttrString(v.ptr(), "__float__"));
          const double ns = number ? PyFloat_AsDouble(v.ptr()) : 0.0;
          if (!number || PyErr_Occurred()) {
            PyErr_Clear();
            std::string shown = py::repr(v);
            if (py::len(py::repr(v)) > 60) shown = py::str(py::repr(v)[py::slice(0, 57, 1)]).cast<std::string>() + "...";
            throw py::type_error(std::string("SimulatedBackend.launch: ") + name + " must be a number of nanoseconds, "
                                 "e.g. 100.0, not " + shown);
          }
          return ns;
        };
        b.launch(kernel_name.cast<std::string>(), nanoseconds(duration_ns, "duration_ns"), nanoseconds(gap_ns, "gap_ns"),
                 stream);
      }, py::arg("kernel_name"), py::arg("duration_ns"), py::arg("gap_ns") = 0.0, py::arg("stream") = 0,
           "A simulated kernel of the given duration, launched now on `stream` (0 the default): it starts gap_ns "
           "after the previous kernel of its stream ends, beside the other streams' kernels")
      .def("join", &SimulatedBackend::join, py::arg("from_stream"), py::arg("into_stream") = 0,
           "into_stream waits for what from_stream launched so far (an event recorded and waited on)")
      .def("set_persisting_l2", &SimulatedBackend::set_persisting_l2, py::arg("bytes"),
           "A persisting-L2 carve-out, as a candidate would set it")
      .def_property_readonly("persisting_l2_resets", &SimulatedBackend::persisting_l2_resets,
                             "How often kscope reset a persisting-L2 carve-out (set_persisting_l2)")
      .def("during_synchronize", [](SimulatedBackend& b, py::object fn) {
        if (fn.is_none()) return b.during_synchronize(nullptr);
        b.during_synchronize([fn] {
          py::gil_scoped_acquire gil;
          call_python([&] { fn(); });
        });
      }, py::arg("fn"), "fn() runs while kscope waits for the GPU to drain, as another thread launching then")
      .def("set_clock_readings", [](SimulatedBackend& b, const std::vector<std::pair<double, double>>& readings) {
        std::vector<kscope::ClockReading> clocks;
        for (auto [sm, mem] : readings) {
          kscope::ClockReading c;
          c.sm_mhz = sm;
          c.memory_mhz = mem;
          clocks.push_back(c);
        }
        b.set_clock_readings(std::move(clocks));
      }, "(sm_mhz, memory_mhz) pairs returned in turn around each run")
      .def("set_thermal_margins", [](SimulatedBackend& b, std::vector<double> margins) {
        b.device().set_thermal_margins(std::move(margins));
      }, "T.Limit margins (°C) returned in turn before each run (the last one repeats)")
      .def("deny_clock_lock", [](SimulatedBackend& b, std::string message) { b.device().deny_clock_lock(std::move(message)); },
           "Makes clock_control='base' fail with this message, as without the right to lock clocks")
      .def_property_readonly(
          "clocks_locked", [](SimulatedBackend& b) { return b.device().clocks_locked(); },
          "Whether the simulated clocks are locked now (clock_control='base' during a session)")
      .def("fail_next_region_end", &SimulatedBackend::fail_next_region_end, py::arg("message"),
           "Makes the next region's close fail with BackendError(message), as a backend failing there")
      .def("set_max_batch_runs", &SimulatedBackend::set_max_batch_runs, py::arg("runs"),
           "Runs per batch (as the cupti backend collects them)")
      .def("set_device", [](SimulatedBackend& b, const std::string& name, std::size_t sm_count,
                            std::size_t compute_capability, std::size_t memory_bus_width_bits,
                            double rated_sm_clock_mhz, double rated_memory_clock_mhz) {
        b.set_device({name, rated_sm_clock_mhz, rated_memory_clock_mhz, sm_count, compute_capability,
                      memory_bus_width_bits});
      }, py::arg("name") = kscope::testing::SimulatedDevice{}.name, py::arg("sm_count") = 132,
           py::arg("compute_capability") = 90, py::arg("memory_bus_width_bits") = 6144,
           py::arg("rated_sm_clock_mhz") = 1980.0, py::arg("rated_memory_clock_mhz") = 3201.0,
           "The device later sessions describe (an H200 by default): its roofs follow from it")
      .def("set_passes", &SimulatedBackend::set_passes, py::arg("passes"),
           "Replay passes per batch (as the counters backend with a multi-pass metric set)")
      .def("set_power", [](SimulatedBackend& b, double idle_w, double kernel_w, double flush_w, double flush_s,
                           double update_s, double read_s, std::uint64_t start_mj) {
        b.device().energy().set_power({idle_w, kernel_w, flush_w, flush_s, update_s, read_s, start_mj});
      }, py::arg("idle_w") = kscope::testing::SimulatedPower{}.idle_w,
         py::arg("kernel_w") = kscope::testing::SimulatedPower{}.kernel_w,
         py::arg("flush_w") = kscope::testing::SimulatedPower{}.flush_w,
         py::arg("flush_s") = kscope::testing::SimulatedPower{}.flush_s,
         py::arg("update_s") = kscope::testing::SimulatedPower{}.update_s,
         py::arg("read_s") = kscope::testing::SimulatedPower{}.read_s,
         py::arg("start_mj") = kscope::testing::SimulatedPower{}.start_mj,
           "The simulated GPU's power (W) and energy counter, for the energy metrics (before the profiled call)")
      .def("remove_energy_counter", [](SimulatedBackend& b, std::string message) {
        b.device().energy().remove(std::move(message));
      }, py::arg("message"), "Makes reading the energy counter fail with BackendError(message), as on a GPU without one")
      .def("restart_energy_counter", [](SimulatedBackend& b, std::uint64_t millijoules) {
        b.device().energy().restart_at(millijoules);
      }, py::arg("millijoules"), "The energy counter continues from this value at its next update (a driver reload)")
      .def("set_noise", [](SimulatedBackend& b, std::uint64_t seed, double jitter_pct, double outlier_rate,
                           double outlier_factor, double clock_bound, double drift_pct, double drift_period_s,
                           double clock_drops_per_s, double dropped_sm_clock_mhz, double clock_drop_s,
                           double run_overhead_s, const std::map<std::string, std::map<std::string, double>>& per_kernel) {
        kscope::testing::SimulatedNoise noise;
        noise.seed = seed;
        noise.kernel = {jitter_pct, outlier_rate, outlier_factor, clock_bound};
        noise.drift_pct = drift_pct;
        noise.drift_period_s = drift_period_s;
        noise.clock_drops_per_s = clock_drops_per_s;
        noise.dropped_sm_clock_mhz = dropped_sm_clock_mhz;
        noise.clock_drop_s = clock_drop_s;
        noise.run_overhead_s = run_overhead_s;
        for (const auto& [name, fields] : per_kernel) {
          kscope::testing::KernelNoise& n = noise.per_kernel[name] = noise.kernel;
          const std::map<std::string, double*> named{{"jitter_pct", &n.jitter_pct}, {"outlier_rate", &n.outlier_rate},
                                                     {"outlier_factor", &n.outlier_factor}, {"clock_bound", &n.clock_bound}};
          for (const auto& [field, value] : fields) {
            const auto found = named.find(field);
            if (found == named.end())
              throw kscope::ConfigError("set_noise: per_kernel['" + name + "'] names '" + field +
                                        "'; a kernel's noise takes jitter_pct, outlier_rate, outlier_factor and clock_bound");
            *found->second = value;
          }
        }
        b.set_noise(noise);
      }, py::arg("seed") = 0, py::arg("jitter_pct") = 0.0, py::arg("outlier_rate") = 0.0, py::arg("outlier_factor") = 1.5,
         py::arg("clock_bound") = 1.0, py::arg("drift_pct") = 0.0, py::arg("drift_period_s") = 1.0,
         py::arg("clock_drops_per_s") = 0.0, py::arg("dropped_sm_clock_mhz") = 1755.0, py::arg("clock_drop_s") = 0.01,
         py::arg("run_overhead_s") = 50e-6, py::arg("per_kernel") = std::map<std::string, std::map<std::string, double>>{},
         "From now on every launch's duration varies (kscope/simulated_noise.hpp): a lognormal jitter of about "
         "jitter_pct, outliers (outlier_rate of the launches take outlier_factor times as long), clock_bound of the "
         "time following the SM clock; per_kernel={kernel name: {field: value}} overrides those four per kernel (a "
         "config that launches a kernel of its own name has its own noise). The whole GPU drifts by drift_pct over "
         "drift_period_s, and its SM clock (in the clock readings) drops to dropped_sm_clock_mhz clock_drops_per_s "
         "times a simulated second, for clock_drop_s; each run adds run_overhead_s of simulated time. The same seed "
         "gives the same timings")
      .def_property_readonly(
          "metric", [](const SimulatedBackend& b) { return b.metrics().front().name; },
          "The metric its rows carry: test__kernel_duration")
      .def_property_readonly("flush_count", &SimulatedBackend::flush_count,
                             "L2 flushes so far (one per region of cache_control='all')")
      .def_property_readonly("session_count", &SimulatedBackend::session_count, "Profiling sessions opened so far");
}

PYBIND11_MODULE(_core, m) {
  m.doc() = "The kscope engine (C++), as used by the kscope Python package";
  m.attr("__version__") = KSCOPE_VERSION;
  m.attr("MAX_RUNS_PER_CONFIG") = kscope::kMaxRunsPerConfig;
  py::register_exception_translator(translate);
  // The engine's messages name Python options and fixes from now on, and reach Python's warnings
  // and sys.stderr; the sink goes before the interpreter does.
  kscope::detail::set_caller(kscope::detail::Caller::python);
  kscope::detail::set_log_sink(std::shared_ptr<PythonConsole>(new PythonConsole));  // not make_shared: see progress_observer
  py::module_::import("atexit").attr("register")(py::cpp_function([] { kscope::detail::set_log_sink(nullptr); }));

  bind_backends(m);
  bind_settings_parts(m);
  bind_settings(m);
  bind_columns(m);
  bind_metrics(m);
  bind_results(m);
  bind_shards(m);
  bind_compare(m);
  bind_evaluate(m);
  bind_tune(m);
  bind_sessions(m);
  bind_doctor(m);
  bind_testing(m);
}

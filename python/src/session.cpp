// A profiling session from Python: the sweep's configs and body, the callbacks the engine calls back
// (with the GIL taken again only for them), profile() and the regions a body opens.
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "bindings.hpp"
#include "kscope/detail/annotation_access.hpp"
#include "kscope/detail/enum_names.hpp"
#include "kscope/detail/interrupt.hpp"
#include "kscope/kscope.hpp"
#include "kscope/testing.hpp"
#include "python_errors.hpp"
#include "python_session.hpp"

namespace kscope_python {

namespace {

// A collector's value, which the Python side made None, bool, int, float or str.
kscope::Cell to_cell(const py::handle& v) {
  if (v.is_none()) return {};
  if (PyBool_Check(v.ptr())) return v.cast<bool>();
  if (PyLong_Check(v.ptr())) return static_cast<std::int64_t>(v.cast<long long>());
  if (PyFloat_Check(v.ptr())) return v.cast<double>();
  return v.cast<std::string>();
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

kscope::CollectionScope scope_named(const std::string& scope) {
  for (const auto& [value, name] : kscope::detail::enum_names(kscope::CollectionScope{}))
    if (name == scope) return value;
  throw kscope::InternalError("no collection scope '" + scope + "' (kscope bug: please report it with this message)");
}

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

}  // namespace kscope_python

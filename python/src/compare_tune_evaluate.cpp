// The engine's decisions between configs in Python: compare (two Results, row by row), tune (a race
// of configs) and evaluate (a candidate against a reference, for correctness and speed).
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "bindings.hpp"
#include "kscope/detail/enum_names.hpp"
#include "kscope/detail/result_files.hpp"
#include "kscope/kscope.hpp"
#include "kscope/testing.hpp"
#include "python_errors.hpp"
#include "python_session.hpp"
#include "python_tables.hpp"

namespace kscope_python {

namespace {

// The names of an enumeration of the name table (kscope/detail/enum_names.hpp), in its order.
template <typename E>
std::vector<std::string> names_of() {
  std::vector<std::string> out;
  for (const auto& [value, name] : kscope::detail::enum_names(E{})) out.emplace_back(name);
  return out;
}

py::object optional_index(const std::optional<std::size_t>& index) {
  return index ? py::object(py::int_(*index)) : py::object(py::none());
}

// kscope.compare's engine call: ({column: [cells]}, baseline and candidate config index per row
// (None on the side a row is missing from), warnings, gate). directions: {metric: "lower"|"higher"|"undefined"}.
py::tuple run_compare(const kscope::Results& baseline, const kscope::Results& candidate, kscope::CompareOptions options,
                      const std::map<std::string, std::string>& directions, const std::string& output_prefix) {
  for (const auto& [metric, direction] : directions) {
    const auto named = kscope::detail::enum_named<kscope::MetricDirection>(direction);
    if (!named) throw kscope::InternalError("the Python side passed an unknown direction (kscope bug: please report it)");
    options.directions[metric] = *named;
  }
  const kscope::Comparison comparison = [&] {
    py::gil_scoped_release release;  // the bootstrap takes a moment and touches no Python object
    kscope::Comparison c = kscope::compare(baseline, candidate, options);
    if (!output_prefix.empty()) c.write_all(output_prefix);
    return c;
  }();
  py::list baseline_configs, candidate_configs;
  for (const auto& r : comparison.rows) {
    baseline_configs.append(optional_index(r.baseline.config_index));
    candidate_configs.append(optional_index(r.candidate.config_index));
  }
  return py::make_tuple(py::object(columns(comparison.to_table(), {})[0]), baseline_configs, candidate_configs,
                        comparison.warnings, kscope::to_string(comparison.gate()));
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

// The Python side (kscope/_evaluate.py) makes every Tensors as (views, owner, observed[, names]):
// views [(address, shape, dtype name, "device" | "host")], the Python object whose life keeps their
// memory, [(finding name, detail)] seen of the call, and outputs' names ("output['attn']").

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
  if (parts.size() > 3) t.names = parts[3].cast<std::vector<std::string>>();
  return t;
}

const py::object& owner_of(const kscope::Tensors& t) { return *static_cast<const py::object*>(t.owner.get()); }

// inputs(config index, seed), reference(inputs owner), candidate(inputs owner): each -> (views,
// owner, observed[, names]); stream() -> the caller's stream as an integer.
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

}  // namespace

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
  m.def("enum_names", [] {
    py::dict out;
    out["Verdict"] = names_of<kscope::Verdict>();
    out["Gate"] = names_of<kscope::Gate>();
    out["MetricDirection"] = names_of<kscope::MetricDirection>();
    out["EvaluationVerdict"] = names_of<kscope::EvaluationVerdict>();
    out["Side"] = names_of<kscope::Side>();
    out["RaceOutcome"] = names_of<kscope::RaceOutcome>();
    out["Precision"] = names_of<kscope::Precision>();
    return out;
  }, "{enumeration: [names]} of the derived results' enumerations and the declared work's precisions, from the "
     "engine's name table");
  m.def("same_band", [](double threshold_pct) {
    const auto band = kscope::same_band(threshold_pct);
    return py::make_tuple(band.lower, band.upper);
  }, py::arg("threshold_pct"), "(lower, upper): the ratios within threshold_pct that compare, evaluate and tune call the same");
  m.def("compare", &run_compare, py::arg("baseline"), py::arg("candidate"), py::arg("options"), py::arg("directions"),
        py::arg("output_prefix") = "",
        ("The comparison's table and what it says; written as " + kscope::detail::comparison_files_text("<output_prefix>") +
         " when output_prefix is given").c_str());
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
        return columns(r.table(), config_indices(r.rows()));
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
      .def("heading", &kscope::Race::heading,
           "The lines above the race's table: the session, the decision, the cost and the rounds")
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
      .def_readwrite("checked_runs", &kscope::EvaluateOptions::checked_runs)
      .def("validate", &kscope::EvaluateOptions::validate);
  py::class_<kscope::Evaluation>(m, "Evaluation")
      .def("table", [](const kscope::Evaluation& e) { return columns(e.table(), config_indices(e.rows())); },
           "({column: [cells]}, [config index per row]) of the evaluation table")
      .def("findings", [](const kscope::Evaluation& e) {
        return columns(e.findings_table(), config_indices(e.findings()));
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
        py::arg("inputs"), py::arg("reference"), py::arg("candidate"), py::arg("stream"),
        py::arg("simulated"),
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

}  // namespace kscope_python

// The parts of kscope._core, each binding one concept of the engine (module.cpp calls them in order).
#pragma once

// Every part includes pybind11/stl.h, so that a C++ container converts alike in every one.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

namespace kscope_python {

namespace py = pybind11;

void bind_errors(py::module_& m);    // errors.cpp: the engine's errors as kscope.errors' classes
void bind_console(py::module_& m);   // errors.cpp: the engine's messages to warnings and sys.stderr
void bind_backends(py::module_& m);  // backends.cpp: the backend registry
void bind_settings_parts(py::module_& m);  // settings.cpp: the enumerations and parts of Settings
void bind_settings(py::module_& m);  // settings.cpp: Settings, its fields' table and its checks
void bind_columns(py::module_& m);   // results.cpp: the tables' columns
void bind_metrics(py::module_& m);   // backends.cpp: what the backends measure
void bind_results(py::module_& m);   // results.cpp: Results, saved and loaded
void bind_shards(py::module_& m);    // results.cpp: the shard of this process, and merging
void bind_compare(py::module_& m);   // compare_tune_evaluate.cpp
void bind_evaluate(py::module_& m);  // compare_tune_evaluate.cpp
void bind_tune(py::module_& m);      // compare_tune_evaluate.cpp
void bind_sessions(py::module_& m);  // session.cpp: profile() and the regions a body opens
void bind_lines(py::module_& m);     // lines.cpp: line sampling, its results and stall reasons
void bind_doctor(py::module_& m);    // backends.cpp: the environment doctor
void bind_testing(py::module_& m);   // testing.cpp: the simulated backend

}  // namespace kscope_python

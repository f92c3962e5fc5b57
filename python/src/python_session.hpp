// What a sweep takes from Python (session.cpp): its configs, its body and the callbacks every
// engine call shares (profile, tune, evaluate).
#pragma once

#include <string>
#include <vector>

#include "bindings.hpp"
#include "kscope/kscope.hpp"

namespace kscope_python {

// Explicit configs (one row per config) are one zipped group; no names means one empty config.
kscope::Sweep make_sweep(const std::vector<std::string>& names, const py::list& rows);

// body(config index) as the engine's Body. A Ctrl-C that Python's handler saw while the engine ran
// (the GIL released) lets the run complete; the sweep stops after it.
kscope::Body python_body(const py::function& body);

// progress(event, dict) for the notebook's progress display. Per-run calls are throttled, so that
// microsecond bodies do not take the GIL for nothing. A KeyboardInterrupt raised in it (a notebook
// interrupt landing there) stops the sweep after the run just finished, as one in the body.
kscope::ProgressObserver progress_observer(PyObject* fn);

// work(annotation, config index) -> None or (bytes, flops, precision, tensor_cores), checked in Python.
kscope::DeclaredWork declared_work(PyObject* fn, const std::vector<std::string>& annotations);

// An info collector's scope, by the engine's name of it.
kscope::CollectionScope scope_named(const std::string& scope);

}  // namespace kscope_python

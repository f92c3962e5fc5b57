// kscope._core: the engine for Python. The Python package decides what to run (configs, options,
// callables); this module hands it to kscope::profile and hands back the engine's tables. The GIL is
// released while the engine runs and taken again only to call back into Python, so Python threads
// (data loaders, worker threads launching kernels inside a region) keep running during a sweep.
// Each concept's bindings are a part of their own (bindings.hpp); classes are bound before the
// functions whose signatures name them.
#include "bindings.hpp"
#include "kscope/kscope.hpp"

namespace kp = kscope_python;

PYBIND11_MODULE(_core, m) {
  m.doc() = "The kscope engine (C++), as used by the kscope Python package";
  m.attr("__version__") = KSCOPE_VERSION;
  m.attr("MAX_RUNS_PER_CONFIG") = kscope::kMaxRunsPerConfig;
  kp::bind_errors(m);
  kp::bind_console(m);
  kp::bind_backends(m);
  kp::bind_settings_parts(m);
  kp::bind_settings(m);
  kp::bind_columns(m);
  kp::bind_metrics(m);
  kp::bind_results(m);
  kp::bind_shards(m);
  kp::bind_compare(m);
  kp::bind_evaluate(m);
  kp::bind_tune(m);
  kp::bind_sessions(m);
  kp::bind_lines(m);
  kp::bind_doctor(m);
  kp::bind_testing(m);
}

// Line sampling from Python: profile_lines, LineResults and their tables, saved, loaded and compared,
// and the stall reasons' descriptions.
#include <string>
#include <vector>

#include "bindings.hpp"
#include "kscope/kscope.hpp"
#include "kscope/lines.hpp"
#include "kscope/testing.hpp"
#include "python_session.hpp"
#include "python_tables.hpp"

namespace kscope_python {

namespace {

template <typename MakeTable>
py::tuple table_with_configs(MakeTable make) {
  std::vector<std::size_t> configs;
  kscope::Table t = make(&configs);
  return columns(t, configs);
}

kscope::LineResults run_profile_lines(const std::vector<std::string>& names, const py::list& rows,
                                      const kscope::Settings& base, const py::function& body, unsigned period_log2,
                                      bool sass_metrics, kscope::testing::SimulatedBackend* simulated,
                                      const py::object& progress) {
  const kscope::Sweep sweep = make_sweep(names, rows);
  kscope::Settings settings = base;
  if (!progress.is_none()) settings.progress_observer = progress_observer(progress.ptr());
  kscope::LineSampling sampling;
  sampling.period_log2 = period_log2;
  sampling.sass_metrics = sass_metrics;
  const kscope::Body call_body = python_body(body);
  py::gil_scoped_release release;
  return simulated ? kscope::profile_lines_with_backend(sweep, settings, call_body, *simulated, sampling)
                   : kscope::profile_lines(sweep, settings, call_body, sampling);
}

}  // namespace

void bind_lines(py::module_& m) {
  py::class_<kscope::LineResults>(m, "LineResults")
      .def("sweep", &kscope::LineResults::sweep, "The sweep's Results (per annotation its kernels' samples per run)")
      .def("lines", [](const kscope::LineResults& r) {
        return table_with_configs([&](auto* c) { return r.lines_table(c); });
      }, "({column: [cells]}, [config index per row]) of the line table")
      .def("instructions", [](const kscope::LineResults& r) {
        return table_with_configs([&](auto* c) { return r.instructions_table(c); });
      }, "The same of the per-instruction table")
      .def("kernels", [](const kscope::LineResults& r) {
        return table_with_configs([&](auto* c) { return r.kernels_table(c); });
      }, "The same of the per-kernel table")
      .def("listing", &kscope::LineResults::listing, py::arg("top") = 10,
           "Each kernel's `top` lines with their share and dominant stall reason, as text")
      .def("notes", [](const kscope::LineResults& r) { return r.code().notes; },
           "What the whole session could not do (no disassembler, no SASS metrics, ...)")
      .def("sources", [](const kscope::LineResults& r) { return r.code().sources; },
           "{file: its text as it was when measured} of the files the line rows name")
      .def("write_json", py::overload_cast<const std::string&>(&kscope::LineResults::write_json, py::const_),
           py::arg("path"));
  m.def("load_line_results", py::overload_cast<const std::string&>(&kscope::load_line_results), py::arg("path"),
        "Reads a file written by LineResults.write_json");
  m.def("compare_lines", [](const kscope::LineResults& a, const kscope::LineResults& b) {
    return columns(kscope::compare_lines(a, b), {});
  }, py::arg("baseline"), py::arg("candidate"), "({column: [cells]}, []) of each line's share in both");
  m.def("stall_reasons", [] {
    py::list out;
    for (const auto& r : kscope::stall_reasons()) out.append(py::make_tuple(r.name, r.description));
    return out;
  }, "[(name, description)] of the stall reasons, by Nsight Compute's names");
  m.def("default_sampling_period", [] { return kscope::kDefaultSamplingPeriodLog2; });
  m.def("profile_lines", &run_profile_lines, py::arg("names"), py::arg("rows"), py::arg("settings"), py::arg("body"),
        py::arg("period_log2"), py::arg("sass_metrics"), py::arg("simulated"), py::arg("progress") = py::none(),
        "Runs body(config_index) over the configs with PC sampling and returns the LineResults");
}

}  // namespace kscope_python

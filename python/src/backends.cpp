// The backends in Python: the registry (backend= names, Backend.cupti), what each measures (the
// metrics, the counter backend's metric database, Speed of Light) and the environment doctor.
#include <string>
#include <tuple>
#include <vector>

#include "bindings.hpp"
#include "kscope/backend_registry.hpp"
#include "kscope/doctor.hpp"
#include "kscope/kscope.hpp"
#include "kscope/metrics.hpp"
#include "python_tables.hpp"

namespace kscope_python {

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

}  // namespace kscope_python

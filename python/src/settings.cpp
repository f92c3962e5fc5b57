// Settings in Python: the engine's enumerations by the engine's names, the parts of Settings, the
// table of its fields (settings_fields(), which the Python option table is checked against) and the
// engine's checks of them.
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "bindings.hpp"
#include "kscope/detail/collector_names.hpp"
#include "kscope/detail/enum_names.hpp"
#include "kscope/detail/result_files.hpp"
#include "kscope/detail/settings_fields.hpp"
#include "kscope/kscope.hpp"
#include "python_session.hpp"

namespace kscope_python {

namespace {

// An engine enumeration with its members named as the engine names them (kscope/detail/enum_names.hpp);
// a name that is a Python keyword gets a trailing underscore (InfoCollectorErrors.raise_).
template <typename E>
void bind_enum(py::module_& m, const char* name) {
  py::enum_<E> bound(m, name);
  const py::object is_keyword = py::module_::import("keyword").attr("iskeyword");
  for (const auto& [value, engine_name] : kscope::detail::enum_names(E{}))
    bound.value(is_keyword(engine_name).template cast<bool>() ? (std::string(engine_name) + "_").c_str() : engine_name, value);
}

using SettingsClass = py::class_<kscope::Settings>;
using kscope::detail::SettingsFieldInfo;

void bind_field(SettingsClass&, const SettingsFieldInfo&, std::monostate) {}  // a callable: given to profile()

template <typename T>
void bind_field(SettingsClass& settings, const SettingsFieldInfo& field, T kscope::Settings::*member) {
  settings.def_readwrite(field.name.c_str(), member, field.doc.c_str());
}

// A shard as Python writes it: None, or (index, count).
void bind_field(SettingsClass& settings, const SettingsFieldInfo& field,
                std::optional<kscope::Shard> kscope::Settings::*member) {
  settings.def_property(
      field.name.c_str(),
      [member](const kscope::Settings& s) -> py::object {
        const auto& shard = s.*member;
        return shard ? py::object(py::make_tuple(shard->index, shard->count)) : py::none();
      },
      [member](kscope::Settings& s, const std::optional<std::pair<std::size_t, std::size_t>>& shard) {
        if (shard) s.*member = kscope::Shard{shard->first, shard->second};
        else (s.*member).reset();
      },
      (field.doc + ": None, or (index, count)").c_str());
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

}  // namespace

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
  // Each field of the engine's table with a type Python has, as it is (callables are passed to
  // profile() instead): a field added to the table needs no line here.
  py::class_<kscope::Settings> settings(m, "Settings", "The engine's Settings; its fields: settings_fields()");
  settings.def(py::init<>());
  for (const auto& field : kscope::detail::settings_field_infos())
    std::visit([&](auto member) { bind_field(settings, field, member); }, field.member);

  m.def("settings_fields", [] {
    py::list out;
    for (const auto& f : kscope::detail::settings_field_infos())
      out.append(py::make_tuple(f.name, f.python_name, f.python_type, f.role, f.doc));
    return out;
  }, "[(name, python_name, python_type, role, doc)] of every Settings field, from the engine's one table; role: "
     "measurement (a resume and a merge must agree), summary (a merge must agree) or session");
  m.def("entry_options", [] {
    py::dict out;
    for (const auto& e : kscope::detail::entry_options_infos()) {
      py::dict refused;
      for (const auto& [name, why] : e.refused) refused[py::str(name)] = why;
      out[py::str(e.entry)] = py::dict(py::arg("refused") = refused, py::arg("fixed") = e.fixed);
    }
    return out;
  }, "{entry: {'refused': {option: why}, 'fixed': [option]}} of profile, tune and evaluate: the options each "
     "refuses, by analyze.kernel's names, and those it sets itself");
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

}  // namespace kscope_python

// Settings in Python: the engine's enumerations by the engine's names, the parts of Settings, the
// table of its fields (settings_fields(), which the Python option table is checked against) and the
// engine's checks of them.
#include <string>
#include <utility>
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

}  // namespace

// The enumerations and parts of Settings.
void bind_settings_parts(py::module_& m) {
  bind_enum<kscope::CacheControl>(m, "CacheControl");
  bind_enum<kscope::ClockControl>(m, "ClockControl");
  bind_enum<kscope::ThermalMode>(m, "ThermalMode");
  bind_enum<kscope::ReplayMode>(m, "ReplayMode");
  bind_enum<kscope::Sampling>(m, "Sampling");
  bind_enum<kscope::StopCriterion>(m, "StopCriterion");
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

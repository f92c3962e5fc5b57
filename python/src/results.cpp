// Results and their tables in Python: the summary and samples tables as {column: [cells]}, the
// results file saved and loaded, and the shards of a sweep merged.
#include <sstream>
#include <string>
#include <vector>

#include "bindings.hpp"
#include "kscope/columns.hpp"
#include "kscope/detail/config_cells.hpp"
#include "kscope/detail/files.hpp"
#include "kscope/detail/result_files.hpp"
#include "kscope/detail/session_headline.hpp"
#include "kscope/kscope.hpp"
#include "python_tables.hpp"

namespace kscope_python {

namespace {

std::vector<std::size_t> config_indices(const kscope::Samples& samples) {
  std::vector<std::size_t> out;
  for (std::size_t i = 0; i < samples.size(); ++i) out.push_back(samples.config_index(i));
  return out;
}


}  // namespace

py::list column_specs(const std::vector<kscope::ColumnSpec>& columns) {
  py::list out;
  for (const auto& c : columns) out.append(py::make_tuple(c.name, kscope::to_string(c.type)));
  return out;
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

py::tuple columns(const kscope::Table& table, std::vector<std::size_t> config_indices) {
  py::dict out;
  for (std::size_t c = 0; c < table.columns.size(); ++c) {
    py::list cells;
    for (const auto& row : table.rows) cells.append(to_python(row[c]));
    out[py::str(table.columns[c])] = cells;
  }
  return py::make_tuple(out, config_indices);
}

void bind_columns(py::module_& m) {
  // The tables' columns after Annotation and the config axes: [(name, type)], type one of text,
  // integer, real, boolean, optional_boolean, baseline.
  m.def("summary_columns", [] { return column_specs(kscope::summary_columns()); });
  m.def("sample_columns", [] { return column_specs(kscope::sample_columns()); });
  // The derived results' tables' columns after their config axes, by kind: what the one
  // table-to-DataFrame conversion types their columns by.
  m.def("derived_columns", [] {
    py::dict out;
    out["evaluation"] = column_specs(kscope::evaluation_columns());
    out["findings"] = column_specs(kscope::finding_columns());
    out["race"] = column_specs(kscope::race_columns());
    out["comparison"] = column_specs(kscope::comparison_columns());
    out["lines"] = column_specs(kscope::line_columns());
    out["instructions"] = column_specs(kscope::instruction_columns());
    out["line_kernels"] = column_specs(kscope::line_kernel_columns());
    out["line_comparison"] = column_specs(kscope::line_comparison_columns());
    return out;
  }, "{kind: [(name, type)]} of the evaluation, findings, race and comparison tables, and the line results' "
     "(lines, instructions, line_kernels, line_comparison)");
  m.def("evaluation_view_columns", &kscope::evaluation_view_columns,
        "[column] of an evaluation's table that its readable view shows after the config axes");
  m.def("console_columns", &kscope::console_columns, "[(column, short header)] of the readable view");
  m.def("roofline_console_columns", &kscope::roofline_console_columns,
        "[(column, short header)] the readable view adds for rows with declared work");
}

// Results, saved and loaded.
void bind_results(py::module_& m) {
  py::class_<kscope::Results>(m, "Results")
      .def("report_path", [](const kscope::Results& r) { return r.session().report_path; })
      .def("headline", [](const kscope::Results& r, bool with_machine) {
        return with_machine ? kscope::detail::session_headline_with_machine(r.session())
                            : kscope::detail::session_headline(r.session());
      }, py::arg("with_machine") = false,
           "The session in one line: GPU | backend | cache_control | clock_control (with_machine: then "
           "| driver | host, where known)")
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
        py::call_guard<py::gil_scoped_release>(),  // a pipe may be fed by another Python thread
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
  m.def("make_room_for_call", &kscope::detail::make_room_for_call, py::arg("settings"), py::arg("companions"),
        "Moves a finished call's files under prefix, and the companions beside them, aside; refuses what "
        "it must not move");
  m.def("write_merged", &kscope::write_merged, py::arg("merged"), py::arg("prefix"), py::arg("overwrite"),
        py::arg("resumed"), py::call_guard<py::gil_scoped_release>(),
        "Writes merged results under prefix as a sweep writes its files: never over a sweep or an earlier "
        "merge unless overwrite (or resumed, for an earlier merge), never over a device");
}

}  // namespace kscope_python

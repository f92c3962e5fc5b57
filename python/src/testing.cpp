// The simulated backend of kscope's own tests (kscope.testing): a GPU that measures nothing, whose
// device, clocks, power, noise and failures a test sets.
#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "bindings.hpp"
#include "kscope/kscope.hpp"
#include "kscope/testing.hpp"
#include "python_errors.hpp"

namespace kscope_python {

void bind_testing(py::module_& m) {
  auto testing = m.def_submodule("testing", "The simulated backend of kscope's own tests (no measurement)");
  using kscope::testing::SimulatedBackend;
  py::class_<SimulatedBackend>(testing, "SimulatedBackend",
                               "A GPU that measures nothing: kernels of the durations launch() gives, on a simulated clock.\n"
                               "kscope.testing.simulated_backend() routes profiled calls to one; its methods set what its\n"
                               "device, clocks, power, noise and failures look like, for tests without a GPU.")
      .def(py::init<>())
      .def("launch", [](SimulatedBackend& b, const py::object& kernel_name, const py::object& duration_ns,
                        const py::object& gap_ns, std::uintptr_t stream) {
        // Checked here, so that a wrong type reads as this call's mistake, not as pybind11's overloads.
        if (!py::isinstance<py::str>(kernel_name))
          throw py::type_error("SimulatedBackend.launch(kernel_name, duration_ns): kernel_name must be a str, not " +
                               std::string(Py_TYPE(kernel_name.ptr())->tp_name));
        const auto nanoseconds = [](const py::object& v, const char* name) {
          const bool number = !PyBool_Check(v.ptr()) && (PyFloat_Check(v.ptr()) || PyLong_Check(v.ptr()) ||
                                                          PyObject_HasAttrString(v.ptr(), "__float__"));
          const double ns = number ? PyFloat_AsDouble(v.ptr()) : 0.0;
          if (!number || PyErr_Occurred()) {
            PyErr_Clear();
            std::string shown = py::repr(v);
            if (py::len(py::repr(v)) > 60) shown = py::str(py::repr(v)[py::slice(0, 57, 1)]).cast<std::string>() + "...";
            throw py::type_error(std::string("SimulatedBackend.launch: ") + name + " must be a number of nanoseconds, "
                                 "e.g. 100.0, not " + shown);
          }
          return ns;
        };
        b.launch(kernel_name.cast<std::string>(), nanoseconds(duration_ns, "duration_ns"), nanoseconds(gap_ns, "gap_ns"),
                 stream);
      }, py::arg("kernel_name"), py::arg("duration_ns"), py::arg("gap_ns") = 0.0, py::arg("stream") = 0,
           "A simulated kernel of the given duration, launched now on `stream` (0 the default): it starts gap_ns "
           "after the previous kernel of its stream ends, beside the other streams' kernels")
      .def("join", &SimulatedBackend::join, py::arg("from_stream"), py::arg("into_stream") = 0,
           "into_stream waits for what from_stream launched so far (an event recorded and waited on)")
      .def("host_wait", &SimulatedBackend::host_wait, py::arg("stream"),
           "The host waits for what `stream` launched so far (a stream synchronize)")
      .def("host_work", &SimulatedBackend::host_work, py::arg("ns"),
           "The host is busy ns nanoseconds before its next launch or the call's return (a slow return path)")
      .def("make_stream", [](SimulatedBackend& b, std::uintptr_t stream, bool non_blocking) {
        b.make_stream(stream, non_blocking ? kscope::testing::StreamKind::non_blocking : kscope::testing::StreamKind::blocking);
      }, py::arg("stream"), py::arg("non_blocking") = true,
           "Launches on `stream` from now on are ordered against the default stream as a CUDA stream made with "
           "these flags: non-blocking (a PyTorch side stream; every stream never made) or blocking. Stream 2 is "
           "each thread's own default stream (cudaStreamPerThread), blocking")
      .def("set_persisting_l2", &SimulatedBackend::set_persisting_l2, py::arg("bytes"),
           "A persisting-L2 carve-out, as a candidate would set it")
      .def_property_readonly("persisting_l2_resets", &SimulatedBackend::persisting_l2_resets,
                             "How often kscope reset a persisting-L2 carve-out (set_persisting_l2)")
      .def("during_synchronize", [](SimulatedBackend& b, py::object fn) {
        if (fn.is_none()) return b.during_synchronize(nullptr);
        b.during_synchronize([fn] {
          py::gil_scoped_acquire gil;
          call_python([&] { fn(); });
        });
      }, py::arg("fn"), "fn() runs while kscope waits for the GPU to drain, as another thread launching then")
      .def("set_clock_readings", [](SimulatedBackend& b, const std::vector<std::pair<double, double>>& readings) {
        std::vector<kscope::ClockReading> clocks;
        for (auto [sm, mem] : readings) {
          kscope::ClockReading c;
          c.sm_mhz = sm;
          c.memory_mhz = mem;
          clocks.push_back(c);
        }
        b.set_clock_readings(std::move(clocks));
      }, "(sm_mhz, memory_mhz) pairs returned in turn around each run")
      .def("set_thermal_margins", [](SimulatedBackend& b, std::vector<double> margins) {
        b.device().set_thermal_margins(std::move(margins));
      }, "T.Limit margins (°C) returned in turn before each run (the last one repeats)")
      .def("set_other_processes", [](SimulatedBackend& b, std::vector<std::vector<unsigned>> readings) {
        b.device().set_other_processes(std::move(readings));
      }, py::arg("readings"),
           "The pids of other processes running kernels on the GPU, one list per batch of runs in turn (the last "
           "repeats): the runs of a batch with any are flagged OtherProcess")
      .def("deny_clock_lock", [](SimulatedBackend& b, std::string message) { b.device().deny_clock_lock(std::move(message)); },
           "Makes clock_control='base' fail with this message, as without the right to lock clocks")
      .def_property_readonly(
          "clocks_locked", [](SimulatedBackend& b) { return b.device().clocks_locked(); },
          "Whether the simulated clocks are locked now (clock_control='base' during a session)")
      .def("fail_next_region_end", &SimulatedBackend::fail_next_region_end, py::arg("message"),
           "Makes the next region's close fail with BackendError(message), as a backend failing there")
      .def("set_max_batch_runs", &SimulatedBackend::set_max_batch_runs, py::arg("runs"),
           "Runs per batch (as the cupti backend collects them)")
      .def("set_device", [](SimulatedBackend& b, const std::string& name, std::size_t sm_count,
                            std::size_t compute_capability, std::size_t memory_bus_width_bits,
                            double rated_sm_clock_mhz, double rated_memory_clock_mhz) {
        b.set_device({name, rated_sm_clock_mhz, rated_memory_clock_mhz, sm_count, compute_capability,
                      memory_bus_width_bits});
      }, py::arg("name") = kscope::testing::SimulatedDevice{}.name, py::arg("sm_count") = 132,
           py::arg("compute_capability") = 90, py::arg("memory_bus_width_bits") = 6144,
           py::arg("rated_sm_clock_mhz") = 1980.0, py::arg("rated_memory_clock_mhz") = 3201.0,
           "The device later sessions describe (an H200 by default): its roofs follow from it")
      .def("set_passes", &SimulatedBackend::set_passes, py::arg("passes"),
           "Replay passes per batch (as the counters backend with a multi-pass metric set)")
      .def("set_power", [](SimulatedBackend& b, double idle_w, double kernel_w, double flush_w, double flush_s,
                           double update_s, double read_s, std::uint64_t start_mj) {
        b.device().energy().set_power({idle_w, kernel_w, flush_w, flush_s, update_s, read_s, start_mj});
      }, py::arg("idle_w") = kscope::testing::SimulatedPower{}.idle_w,
         py::arg("kernel_w") = kscope::testing::SimulatedPower{}.kernel_w,
         py::arg("flush_w") = kscope::testing::SimulatedPower{}.flush_w,
         py::arg("flush_s") = kscope::testing::SimulatedPower{}.flush_s,
         py::arg("update_s") = kscope::testing::SimulatedPower{}.update_s,
         py::arg("read_s") = kscope::testing::SimulatedPower{}.read_s,
         py::arg("start_mj") = kscope::testing::SimulatedPower{}.start_mj,
           "The simulated GPU's power (W) and energy counter, for the energy metrics (before the profiled call)")
      .def("remove_energy_counter", [](SimulatedBackend& b, std::string message) {
        b.device().energy().remove(std::move(message));
      }, py::arg("message"), "Makes reading the energy counter fail with BackendError(message), as on a GPU without one")
      .def("restart_energy_counter", [](SimulatedBackend& b, std::uint64_t millijoules) {
        b.device().energy().restart_at(millijoules);
      }, py::arg("millijoules"), "The energy counter continues from this value at its next update (a driver reload)")
      .def("set_noise", [](SimulatedBackend& b, std::uint64_t seed, double jitter_pct, double outlier_rate,
                           double outlier_factor, double clock_bound, double drift_pct, double drift_period_s,
                           double clock_drops_per_s, double dropped_sm_clock_mhz, double clock_drop_s,
                           double run_overhead_s, const std::map<std::string, std::map<std::string, double>>& per_kernel) {
        kscope::testing::SimulatedNoise noise;
        noise.seed = seed;
        noise.kernel = {jitter_pct, outlier_rate, outlier_factor, clock_bound};
        noise.drift_pct = drift_pct;
        noise.drift_period_s = drift_period_s;
        noise.clock_drops_per_s = clock_drops_per_s;
        noise.dropped_sm_clock_mhz = dropped_sm_clock_mhz;
        noise.clock_drop_s = clock_drop_s;
        noise.run_overhead_s = run_overhead_s;
        for (const auto& [name, fields] : per_kernel) {
          kscope::testing::KernelNoise& n = noise.per_kernel[name] = noise.kernel;
          const std::map<std::string, double*> named{{"jitter_pct", &n.jitter_pct}, {"outlier_rate", &n.outlier_rate},
                                                     {"outlier_factor", &n.outlier_factor}, {"clock_bound", &n.clock_bound}};
          for (const auto& [field, value] : fields) {
            const auto found = named.find(field);
            if (found == named.end())
              throw kscope::ConfigError("set_noise: per_kernel['" + name + "'] names '" + field +
                                        "'; a kernel's noise takes jitter_pct, outlier_rate, outlier_factor and clock_bound");
            *found->second = value;
          }
        }
        b.set_noise(noise);
      }, py::arg("seed") = 0, py::arg("jitter_pct") = 0.0, py::arg("outlier_rate") = 0.0, py::arg("outlier_factor") = 1.5,
         py::arg("clock_bound") = 1.0, py::arg("drift_pct") = 0.0, py::arg("drift_period_s") = 1.0,
         py::arg("clock_drops_per_s") = 0.0, py::arg("dropped_sm_clock_mhz") = 1755.0, py::arg("clock_drop_s") = 0.01,
         py::arg("run_overhead_s") = 50e-6, py::arg("per_kernel") = std::map<std::string, std::map<std::string, double>>{},
         "From now on every launch's duration varies (kscope/simulated_noise.hpp): a lognormal jitter of about "
         "jitter_pct, outliers (outlier_rate of the launches take outlier_factor times as long), clock_bound of the "
         "time following the SM clock; per_kernel={kernel name: {field: value}} overrides those four per kernel (a "
         "config that launches a kernel of its own name has its own noise). The whole GPU drifts by drift_pct over "
         "drift_period_s, and its SM clock (in the clock readings) drops to dropped_sm_clock_mhz clock_drops_per_s "
         "times a simulated second, for clock_drop_s; each run adds run_overhead_s of simulated time. The same seed "
         "gives the same timings")
      .def_property_readonly(
          "metric", [](const SimulatedBackend& b) { return b.metrics().front().name; },
          "The metric its rows carry: test__kernel_duration")
      .def_property_readonly("flush_count", &SimulatedBackend::flush_count,
                             "L2 flushes so far (one per region of cache_control='all')")
      .def_property_readonly("session_count", &SimulatedBackend::session_count, "Profiling sessions opened so far")
      .def("set_code", [](SimulatedBackend& b, const std::string& kernel_name, const py::list& instructions) {
        std::vector<kscope::testing::SimulatedInstruction> code;
        for (const py::handle& item : instructions) {
          const py::dict d = py::reinterpret_borrow<py::dict>(item);
          kscope::testing::SimulatedInstruction in;
          in.pc_offset = d.contains("pc_offset") ? d["pc_offset"].cast<std::uint64_t>() : 0;
          in.sass = d.contains("sass") ? d["sass"].cast<std::string>() : "";
          if (d.contains("source"))
            for (const auto& frame : d["source"].cast<std::vector<std::tuple<std::string, std::uint32_t, std::string>>>())
              in.source.push_back({std::get<0>(frame), std::get<1>(frame), std::get<2>(frame)});
          if (d.contains("stalls"))
            for (const auto& [reason, weight] : d["stalls"].cast<std::map<std::string, double>>())
              in.stalls.emplace_back(reason, weight);
          in.function = d.contains("function") ? d["function"].cast<std::string>() : "";
          in.executed = d.contains("executed") ? d["executed"].cast<std::uint64_t>() : 0;
          in.thread_executed = d.contains("thread_executed") ? d["thread_executed"].cast<std::uint64_t>() : 0;
          code.push_back(std::move(in));
        }
        b.set_code(kernel_name, std::move(code));
      }, py::arg("kernel_name"), py::arg("instructions"),
           "PC sampling (kscope.analyze.lines): the code a kernel's samples land on, one dict per SASS instruction: "
           "pc_offset, sass, source=[(file, line, function), ...] innermost first (empty: no line information), "
           "stalls={reason: weight}, function (a device function not inlined), executed and thread_executed per "
           "launch (SASS metrics)")
      .def("set_source_text", &SimulatedBackend::set_source_text, py::arg("file"), py::arg("text"),
           "The text of a source file as line sampling reads it (else the file on disk)")
      .def("set_dropped_samples", &SimulatedBackend::set_dropped_samples, py::arg("per_launch"),
           "Each sampled launch loses this many samples in the hardware (a full buffer)")
      .def("deny_sampling", &SimulatedBackend::deny_sampling, py::arg("message"),
           "Makes line sampling fail with BackendError(message), as without profiling permission")
      .def("set_sass_metrics_supported", &SimulatedBackend::set_sass_metrics_supported, py::arg("supported"),
           "Whether the simulated GPU counts executed instructions (SASS metrics)");
}

}  // namespace kscope_python

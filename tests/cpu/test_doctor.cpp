// kscope doctor's verdicts through injected probes: a healthy H200, no GPU, a driver too old,
// CUPTI owned by Nsight Compute, counters restricted, NVML missing, ncu missing or too old, an
// interactive Python process, CUDA already initialised; and the text and JSON reports.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "doctor/probes.hpp"
#include "kscope/detail/caller.hpp"
#include "kscope/doctor.hpp"

using namespace kscope;

namespace {

DoctorFacts healthy_h200() {
  DoctorFacts f;
  f.host = {"gpu-h200-01", 1000};
  f.cuda_state = {CudaInitState::driver_not_loaded, false};
  f.runtime_cuda_version = 13000;
  DoctorDevice d;
  d.name = "NVIDIA H200";
  d.uuid = "GPU-5ed87336-0000-1111-2222-333344445555";
  d.cc_major = 9;
  d.sm_count = 132;
  d.memory_bus_width_bits = 6144;
  d.l2_bytes = 62914560;
  d.memory_bytes = 150754820096;
  d.rated_sm_clock_mhz = 1980;
  d.rated_memory_clock_mhz = 3201;
  d.clocks_restricted_to_root = true;
  d.energy_counter_readable = true;
  f.driver = {"", false, 13000, {d}};
  f.nvml = {"", "580.159.04"};
  f.cupti = {"", "/usr/local/cuda/lib64/libcupti.so.13", 130001, "", ""};
  f.counters = {false, false, true, ""};
  f.pc_sampling = {true, ""};
  f.ncu = {"/usr/local/cuda/bin/ncu", "2025.3.1.0", "", ""};
  return f;
}

// Answers from a DoctorFacts, and remembers the order of the questions and the skip reason.
class FakeProbes final : public doctor::DoctorProbes {
 public:
  explicit FakeProbes(DoctorFacts facts) : f_(std::move(facts)) {}
  std::vector<std::string> calls;
  std::string counter_skip_reason;

  HostFacts host() override { return log("host"), f_.host; }
  CudaStateFacts cuda_state() override { return log("cuda_state"), f_.cuda_state; }
  int runtime_cuda_version() override { return log("runtime"), f_.runtime_cuda_version; }
  DriverFacts driver() override { return log("driver"), f_.driver; }
  NvmlFacts nvml(std::vector<DoctorDevice>&) override { return log("nvml"), f_.nvml; }
  CuptiFacts cupti() override { return log("cupti"), f_.cupti; }
  CounterFacts counters(const std::string& skip_reason) override {
    log("counters");
    counter_skip_reason = skip_reason;
    CounterFacts c = f_.counters;
    if (!skip_reason.empty()) c = {c.admin_only, c.root, false, skip_reason};
    return c;
  }
  PcSamplingFacts pc_sampling(const std::string& skip_reason) override {
    log("pc_sampling");
    return skip_reason.empty() ? f_.pc_sampling : PcSamplingFacts{false, skip_reason};
  }
  NcuFacts ncu() override { return log("ncu"), f_.ncu; }

 private:
  void log(const char* call) { calls.emplace_back(call); }
  DoctorFacts f_;
};

DoctorReport diagnose(const DoctorFacts& facts, FakeProbes** keep = nullptr) {
  static std::unique_ptr<FakeProbes> probes;
  probes = std::make_unique<FakeProbes>(facts);
  if (keep) *keep = probes.get();
  return assess(doctor::gather_facts(*probes));
}

const DoctorCheck& check(const DoctorReport& r, const std::string& id) {
  for (const auto& c : r.checks)
    if (c.id == id) return c;
  throw std::runtime_error("no check " + id);
}

const BackendAvailability& backend(const DoctorReport& r, Backend b) {
  for (const auto& a : r.backends)
    if (a.backend == b) return a;
  throw std::runtime_error("no backend " + to_string(b));
}

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

TEST(Doctor, HealthyH200EverythingWorks) {
  const DoctorReport r = diagnose(healthy_h200());
  EXPECT_EQ(r.exit_code(), 0);
  for (const auto& b : r.backends) EXPECT_TRUE(b.available) << to_string(b.backend) << ": " << b.reason;
  EXPECT_EQ(backend(r, Backend::automatic).reason, "uses counters");
  EXPECT_EQ(check(r, "driver").status, CheckStatus::ok);
  EXPECT_TRUE(has(check(r, "driver").summary, "580.159.04 for CUDA 13.0")) << check(r, "driver").summary;
  ASSERT_EQ(check(r, "devices").details.size(), 1u);
  EXPECT_TRUE(has(check(r, "devices").details[0], "NVIDIA H200 (GPU-5ed87336"));
  EXPECT_TRUE(has(check(r, "devices").details[0], "132 SMs, L2 60.0 MiB"));
  EXPECT_TRUE(has(check(r, "devices").details[0], "rated clocks SM 1980 MHz / memory 3201 MHz"));
  EXPECT_EQ(check(r, "counters").status, CheckStatus::ok);
  EXPECT_EQ(check(r, "cupti_owner").status, CheckStatus::ok);
  EXPECT_EQ(check(r, "ncu").status, CheckStatus::ok);
  // Not root: the clock lock is reported as not permitted, without trying it.
  EXPECT_EQ(check(r, "clock_lock").status, CheckStatus::warning);
  EXPECT_TRUE(has(check(r, "clock_lock").summary, "application clocks are restricted to root"));
  EXPECT_EQ(check(r, "energy").status, CheckStatus::ok);
}

TEST(Doctor, ShowsTheRoofsOfEachDeviceAtItsRatedClocks) {
  const DoctorReport r = diagnose(healthy_h200());
  const DoctorCheck& roofs = check(r, "roofs");
  EXPECT_EQ(roofs.status, CheckStatus::ok);
  ASSERT_EQ(roofs.details.size(), 1u);
  const std::string& line = roofs.details[0];
  // 2 x 3201 MHz x 6144 bits / 8; 132 SMs x 1980 MHz x 4096 FLOP per cycle for fp16 on tensor cores.
  EXPECT_TRUE(has(line, "#0 DRAM 4917 GB/s (2 x 3201 MHz x 6144-bit bus)")) << line;
  EXPECT_TRUE(has(line, "Hopper (GH100), 132 SMs x 1980 MHz:")) << line;
  EXPECT_TRUE(has(line, "fp32 66.9, fp32 tensor 535.3, fp16 133.8, fp16 tensor 1071")) << line;
  EXPECT_TRUE(has(line, "fp8 tensor 2141 TFLOP/s")) << line;
  EXPECT_TRUE(has(to_text(r), "roofs")) << to_text(r);

  DoctorFacts orin = healthy_h200();
  orin.driver.devices[0].cc_major = 8;
  orin.driver.devices[0].cc_minor = 7;
  const DoctorReport orin_report = diagnose(orin);
  const DoctorCheck& unknown = check(orin_report, "roofs");
  EXPECT_EQ(unknown.status, CheckStatus::warning);
  EXPECT_TRUE(has(unknown.details[0], "FLOP/s unknown: compute capability 8.7 is not in kscope's table")) << unknown.details[0];
  EXPECT_TRUE(has(unknown.details[0], "DRAM 4917 GB/s")) << unknown.details[0];
}

TEST(Doctor, AsksForTheCudaStateBeforeAnythingElse) {
  FakeProbes* probes = nullptr;
  diagnose(healthy_h200(), &probes);
  ASSERT_FALSE(probes->calls.empty());
  EXPECT_EQ(probes->calls.front(), "cuda_state");
  EXPECT_EQ(probes->counter_skip_reason, "");
}

TEST(Doctor, NoGpuSaysSoAndExitsWithTwo) {
  DoctorFacts f = healthy_h200();
  f.driver = {"libcuda.so.1 could not be loaded (...): no NVIDIA driver is installed or visible here", false, 0, {}};
  f.nvml = {"libnvidia-ml.so.1 could not be loaded", ""};
  FakeProbes* probes = nullptr;
  const DoctorReport r = diagnose(f, &probes);
  EXPECT_EQ(r.exit_code(), 2);
  for (const auto& b : r.backends) EXPECT_FALSE(b.available) << to_string(b.backend);
  EXPECT_EQ(check(r, "driver").status, CheckStatus::error);
  EXPECT_EQ(check(r, "devices").status, CheckStatus::skipped);
  EXPECT_EQ(probes->counter_skip_reason, "no working NVIDIA driver");
  EXPECT_EQ(check(r, "counters").status, CheckStatus::skipped);
  EXPECT_TRUE(has(to_text(r), "nothing can measure here: no usable GPU (no working NVIDIA driver) (exit code 2)"));
}

TEST(Doctor, DriverWithoutDevicesIsNoGpu) {
  DoctorFacts f = healthy_h200();
  f.driver = {"", true, 13000, {}};
  const DoctorReport r = diagnose(f);
  EXPECT_EQ(r.exit_code(), 2);
  EXPECT_EQ(check(r, "devices").status, CheckStatus::error);
  EXPECT_TRUE(has(check(r, "devices").fix, "CUDA_VISIBLE_DEVICES"));
  EXPECT_EQ(backend(r, Backend::events).reason, "no CUDA device is visible");
}

TEST(Doctor, DriverTooOldForTheRuntime) {
  DoctorFacts f = healthy_h200();
  f.driver.cuda_version = 12040;
  const DoctorReport r = diagnose(f);
  EXPECT_EQ(r.exit_code(), 2);
  EXPECT_EQ(check(r, "driver").status, CheckStatus::error);
  EXPECT_TRUE(has(check(r, "driver").summary, "CUDA 12.4; kscope's CUDA runtime is 13.0: the driver is too old"));
  EXPECT_TRUE(has(check(r, "driver").fix, "Update the NVIDIA driver"));
  // Only a newer minor version of the runtime: minor-version compatibility, a warning.
  f.driver.cuda_version = 13000;
  f.runtime_cuda_version = 13010;
  const DoctorReport minor = diagnose(f);
  EXPECT_EQ(minor.exit_code(), 0);
  EXPECT_EQ(check(minor, "driver").status, CheckStatus::warning);
}

TEST(Doctor, CuptiOwnedByNsightComputeLeavesOnlyEvents) {
  DoctorFacts f = healthy_h200();
  f.cupti.owner = "Nsight Compute";
  FakeProbes* probes = nullptr;
  const DoctorReport r = diagnose(f, &probes);
  EXPECT_EQ(r.exit_code(), 1);
  EXPECT_EQ(check(r, "cupti_owner").status, CheckStatus::error);
  EXPECT_TRUE(has(check(r, "cupti_owner").summary, "Nsight Compute"));
  EXPECT_FALSE(backend(r, Backend::cupti).available);
  EXPECT_FALSE(backend(r, Backend::counters).available);
  EXPECT_TRUE(backend(r, Backend::events).available);
  EXPECT_TRUE(backend(r, Backend::automatic).available);
  EXPECT_EQ(backend(r, Backend::automatic).reason, "uses events (CUPTI unavailable)");
  EXPECT_TRUE(has(backend(r, Backend::ncu).reason, "already runs under another profiler (Nsight Compute)"));
  EXPECT_EQ(probes->counter_skip_reason, "CUPTI is owned by Nsight Compute in this process");
}

TEST(Doctor, CuptiHeldByKscopeItselfIsFine) {
  DoctorFacts f = healthy_h200();
  f.cupti.owner = "kscope";
  const DoctorReport r = diagnose(f);
  EXPECT_EQ(r.exit_code(), 0);
  EXPECT_TRUE(has(check(r, "cupti_owner").summary, "held by kscope itself"));
}

TEST(Doctor, CountersRestrictedToAdministrators) {
  DoctorFacts f = healthy_h200();
  f.counters = {true, false, true,
                "cuptiRangeProfilerEnable failed: CUPTI_ERROR_INSUFFICIENT_PRIVILEGES (35). GPU performance counters "
                "are restricted to administrators on this machine (ERR_NVGPUCTRPERM; ...)"};
  const DoctorReport r = diagnose(f);
  EXPECT_EQ(r.exit_code(), 1);
  EXPECT_EQ(check(r, "counters").status, CheckStatus::error);
  EXPECT_TRUE(has(check(r, "counters").summary, "RmProfilingAdminOnly: 1, not root"));
  EXPECT_TRUE(has(check(r, "counters").details.at(0), "CUPTI_ERROR_INSUFFICIENT_PRIVILEGES"));
  EXPECT_TRUE(has(check(r, "counters").fix, "NVreg_RestrictProfilingToAdminUsers=0"));
  EXPECT_FALSE(backend(r, Backend::counters).available);
  EXPECT_FALSE(backend(r, Backend::ncu).available);
  EXPECT_TRUE(has(backend(r, Backend::ncu).reason, "needs the hardware counters"));
  EXPECT_TRUE(backend(r, Backend::cupti).available);
  EXPECT_EQ(backend(r, Backend::automatic).reason, "uses cupti (counters unavailable)");
}

TEST(Doctor, PcSamplingProbedWhereTheCountersAreReadable) {
  const DoctorReport ok = diagnose(healthy_h200());
  EXPECT_EQ(check(ok, "pc_sampling").status, CheckStatus::ok);
  EXPECT_TRUE(backend(ok, Backend::named("pcsampling")).available);

  DoctorFacts busy = healthy_h200();
  busy.pc_sampling = {true, "cuptiPCSamplingEnable failed: CUPTI_ERROR_HARDWARE_BUSY (26). The GPU's performance "
                            "monitor is reserved by another client: DCGM profiling (pause it with 'dcgmi profile "
                            "--pause') ..."};
  const DoctorReport r = diagnose(busy);
  EXPECT_EQ(r.exit_code(), 1);
  EXPECT_EQ(check(r, "pc_sampling").status, CheckStatus::error);
  EXPECT_TRUE(has(check(r, "pc_sampling").details.at(0), "dcgmi profile --pause"));
  EXPECT_FALSE(backend(r, Backend::named("pcsampling")).available);
  EXPECT_TRUE(has(backend(r, Backend::named("pcsampling")).reason, "the PC sampling probe failed"));
  EXPECT_TRUE(backend(r, Backend::counters).available);
}

TEST(Doctor, PcSamplingNotProbedWhereTheCountersAreRestricted) {
  DoctorFacts f = healthy_h200();
  f.counters = {true, false, true, "cuptiRangeProfilerEnable failed: CUPTI_ERROR_INSUFFICIENT_PRIVILEGES (35)"};
  FakeProbes* probes = nullptr;
  const DoctorReport r = diagnose(f, &probes);
  EXPECT_EQ(check(r, "pc_sampling").status, CheckStatus::skipped);
  EXPECT_TRUE(has(check(r, "pc_sampling").summary, "the hardware counters cannot be read"));
  EXPECT_FALSE(backend(r, Backend::named("pcsampling")).available);
  EXPECT_TRUE(has(backend(r, Backend::named("pcsampling")).reason, "CUPTI_ERROR_INSUFFICIENT_PRIVILEGES"));
}

TEST(Doctor, RestrictedCountersAreReportedEvenWhenNotProbed) {
  DoctorFacts f = healthy_h200();
  f.cupti.owner = "Nsight Systems";
  f.counters = {true, false, false, ""};
  const DoctorReport r = diagnose(f);
  EXPECT_EQ(check(r, "counters").status, CheckStatus::error);
  EXPECT_TRUE(has(check(r, "counters").summary, "restricted to administrators"));
}

TEST(Doctor, NvmlMissingCostsTelemetryNotBackends) {
  DoctorFacts f = healthy_h200();
  f.nvml = {"libnvidia-ml.so.1 could not be loaded (not found); it comes with the NVIDIA driver", ""};
  const DoctorReport r = diagnose(f);
  EXPECT_EQ(r.exit_code(), 0);
  EXPECT_EQ(check(r, "nvml").status, CheckStatus::warning);
  EXPECT_TRUE(has(check(r, "nvml").fix, "clock columns read NaN"));
  EXPECT_EQ(check(r, "clock_lock").status, CheckStatus::skipped);
  EXPECT_EQ(check(r, "energy").status, CheckStatus::skipped);
  EXPECT_TRUE(has(check(r, "driver").summary, "version unknown"));
}

TEST(Doctor, NvmlNotFindingADeviceIsAWarning) {
  DoctorFacts f = healthy_h200();
  f.driver.devices[0].nvml_problem = "nvmlDeviceGetHandleByUUID(GPU-...) failed: Not Found (NVML error 6)";
  const DoctorReport r = diagnose(f);
  EXPECT_EQ(check(r, "nvml").status, CheckStatus::warning);
  EXPECT_TRUE(has(check(r, "nvml").details.at(0), "device #0"));
}

TEST(Doctor, RootMayLockClocks) {
  DoctorFacts f = healthy_h200();
  f.counters.root = true;
  const DoctorReport r = diagnose(f);
  EXPECT_EQ(check(r, "clock_lock").status, CheckStatus::ok);
  EXPECT_TRUE(has(check(r, "clock_lock").summary, "without changing any clock"));
}

TEST(Doctor, NcuMissingOrTooOld) {
  DoctorFacts f = healthy_h200();
  f.ncu = {"", "", "the Nsight Compute CLI (ncu) was not found on PATH, ...", ""};
  DoctorReport r = diagnose(f);
  EXPECT_EQ(r.exit_code(), 1);
  EXPECT_EQ(check(r, "ncu").status, CheckStatus::warning);
  EXPECT_FALSE(backend(r, Backend::ncu).available);
  EXPECT_TRUE(has(backend(r, Backend::ncu).reason, "was not found"));
  EXPECT_TRUE(backend(r, Backend::counters).available);
  f.ncu = {"/opt/ncu", "2024.1.0.0", "ncu 2024.1.0.0 at /opt/ncu is older than 2025.3.1.0, ...", ""};
  r = diagnose(f);
  EXPECT_TRUE(has(backend(r, Backend::ncu).reason, "older than 2025.3.1.0"));
}

TEST(Doctor, InteractivePythonCannotUseNcu) {
  DoctorFacts f = healthy_h200();
  f.ncu.rerun_problem = "a Jupyter kernel (python3 -m ipykernel_launcher)";
  const DoctorReport r = diagnose(f);
  EXPECT_EQ(r.exit_code(), 1);
  EXPECT_EQ(check(r, "ncu").status, CheckStatus::warning);
  EXPECT_TRUE(has(backend(r, Backend::ncu).reason, "cannot be re-run under ncu: it is a Jupyter kernel"));
  EXPECT_TRUE(has(check(r, "ncu").fix, "Backend::counters"));
}

TEST(Doctor, CudaAlreadyInitialisedIsReportedWithItsContexts) {
  DoctorFacts f = healthy_h200();
  f.cuda_state = {CudaInitState::initialized, true};
  f.driver.devices[0].primary_context_active = true;
  const DoctorReport r = diagnose(f);
  const DoctorCheck& c = check(r, "cuda_init");
  EXPECT_TRUE(has(c.summary, "already initialised"));
  std::string details;
  for (const auto& d : c.details) details += d + "\n";
  EXPECT_TRUE(has(details, "a CUDA context was current on the calling thread"));
  EXPECT_TRUE(has(details, "primary context of device #0 was active"));
  EXPECT_TRUE(has(details, "the doctor then initialised CUDA itself"));
  EXPECT_EQ(r.exit_code(), 0);
  f.cuda_state = {CudaInitState::not_initialized, false};
  EXPECT_TRUE(has(check(diagnose(f), "cuda_init").summary, "not initialised"));
}

TEST(Doctor, CuptiMissingLeavesEvents) {
  DoctorFacts f = healthy_h200();
  f.cupti = {"libcupti.so.13 could not be loaded (not found)", "", 0, "", ""};
  FakeProbes* probes = nullptr;
  const DoctorReport r = diagnose(f, &probes);
  EXPECT_EQ(check(r, "cupti").status, CheckStatus::error);
  EXPECT_TRUE(has(check(r, "cupti").fix, "LD_LIBRARY_PATH"));
  EXPECT_EQ(check(r, "cupti_owner").status, CheckStatus::skipped);
  EXPECT_FALSE(backend(r, Backend::cupti).available);
  EXPECT_TRUE(backend(r, Backend::events).available);
  EXPECT_EQ(probes->counter_skip_reason, "CUPTI could not be loaded");
}

TEST(Doctor, TextReportListsChecksFixesAndBackends) {
  DoctorFacts f = healthy_h200();
  f.ncu = {"", "", "ncu was not found", ""};
  const std::string text = to_text(diagnose(f));
  EXPECT_TRUE(has(text, "[ ok ] driver")) << text;
  EXPECT_TRUE(has(text, "[warn] ncu")) << text;
  EXPECT_TRUE(has(text, "fix: Run as root")) << text;
  EXPECT_TRUE(has(text, "ncu        UNAVAILABLE: ncu was not found")) << text;
  EXPECT_TRUE(has(text, "counters   available")) << text;
  EXPECT_TRUE(has(text, "Verdict: some backends are unavailable here (each says why) (exit code 1)")) << text;
}

TEST(Doctor, TextReportNamesBackendsAsItsReaderDoes) {
  // C++ says Backend::automatic; Python and the command line (`kscope doctor`) say backend='auto'.
  DoctorFacts f = healthy_h200();
  f.ncu = {"", "", "ncu was not found", ""};
  EXPECT_TRUE(has(to_text(diagnose(f)), "automatic  available")) << to_text(diagnose(f));
  const detail::CallerScope command_line(detail::Caller::command_line);
  const std::string text = to_text(diagnose(f));
  EXPECT_TRUE(has(text, "auto       available")) << text;
  EXPECT_FALSE(has(text, "Backend::")) << text;
  EXPECT_FALSE(has(text, "automatic")) << text;
}

TEST(Doctor, JsonReportCarriesVerdictsAndFacts) {
  const nlohmann::json doc = nlohmann::json::parse(to_json(diagnose(healthy_h200())));
  EXPECT_EQ(doc["exit_code"], 0);
  EXPECT_EQ(doc["verdict"], "every backend works here");
  EXPECT_EQ(doc["checks"].size(), 12u);
  EXPECT_EQ(doc["checks"][0]["id"], "driver");
  EXPECT_EQ(doc["checks"][0]["status"], "ok");
  EXPECT_EQ(doc["backends"].size(), 6u);
  EXPECT_EQ(doc["backends"][4]["backend"], "ncu");
  EXPECT_EQ(doc["backends"][5]["backend"], "pcsampling");
  EXPECT_EQ(doc["facts"]["pc_sampling"]["probed"], true);
  EXPECT_EQ(doc["backends"][4]["available"], true);
  EXPECT_EQ(doc["facts"]["devices"][0]["sm_count"], 132);
  EXPECT_EQ(doc["facts"]["devices"][0]["compute_capability"], "9.0");
  EXPECT_EQ(doc["facts"]["devices"][0]["memory_bus_width_bits"], 6144);
  EXPECT_EQ(doc["facts"]["devices"][0]["roofs"]["architecture"], "Hopper (GH100)");
  EXPECT_NEAR(doc["facts"]["devices"][0]["roofs"]["dram_gbps"].get<double>(), 4916.7, 0.1);
  EXPECT_NEAR(doc["facts"]["devices"][0]["roofs"]["tflops"]["fp16 tensor"].get<double>(), 1070.5, 0.1);
  EXPECT_FALSE(doc["facts"]["devices"][0]["roofs"]["tflops"].contains("fp8"));
  EXPECT_EQ(doc["facts"]["driver"]["cuda_version"], "13.0");
  EXPECT_EQ(doc["facts"]["driver"]["version"], "580.159.04");
  EXPECT_EQ(doc["facts"]["cupti"]["version"], 130001);
  EXPECT_EQ(doc["facts"]["counters"]["admin_only"], false);
  EXPECT_EQ(doc["facts"]["cuda_state"]["state"], "driver_not_loaded");
  EXPECT_EQ(doc["facts"]["ncu"]["version"], "2025.3.1.0");
}

TEST(Doctor, RealProbesOnThisMachineGiveAConsistentReport) {
  // Whatever this machine has: the report must render, and its exit code must match its backends.
  const DoctorReport r = run_doctor();
  const int code = r.exit_code();
  EXPECT_TRUE(code >= 0 && code <= 2);
  EXPECT_FALSE(to_text(r).empty());
  EXPECT_NO_THROW(nlohmann::json::parse(to_json(r)));
  if (!r.facts.driver.problem.empty()) {
    EXPECT_EQ(code, 2);
  }
}

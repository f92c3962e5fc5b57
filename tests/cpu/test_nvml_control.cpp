// NvmlDeviceControl against a fake NVML (a table of C functions over a simulated GPU): clock
// locking and its restoration, the permission errors, telemetry, and the lock held by a whole
// profile session; and kscope doctor's energy row. No real NVML call is made, so no clock of any
// machine is changed.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/control/clock_lock.hpp"
#include "device/nvml.hpp"
#include "doctor/system_probes.hpp"
#include "kscope/doctor.hpp"
#include "kscope/errors.hpp"

using kscope::BackendError;
using kscope::device::NvmlApi;
using kscope::device::NvmlDeviceControl;

namespace {

// The simulated GPU behind the fake entry points.
struct FakeGpu {
  int lock_result = 0;  // what nvmlDeviceSetGpuLockedClocks returns
  bool locked = false;
  unsigned locked_min = 0, locked_max = 0;
  int locks = 0, resets = 0;
  unsigned sm_mhz = 1980, base_sm_mhz = 1590;
  unsigned long long reasons = 0;
  int margin_c = 42;
  std::string seen_uuid;
  unsigned long long energy_mj = 5000;
  int energy_result = 0;  // what nvmlDeviceGetTotalEnergyConsumption returns
  std::vector<NvmlApi::ProcessInfo> running;  // processes with a compute context
  std::vector<NvmlApi::ProcessUtilizationSample> samples;  // the driver's sample buffer
  int utilization_result = 0;  // when not 0, what nvmlDeviceGetProcessUtilization returns
  int running_reads = 0, utilization_reads = 0;
  unsigned long long last_seen_asked = 0;
} gpu;

NvmlApi::Device const kHandle = reinterpret_cast<NvmlApi::Device>(0x1);

NvmlApi fake_api() {
  gpu = FakeGpu{};
  NvmlApi api;
  api.device_get_handle_by_uuid = [](const char* uuid, NvmlApi::Device* d) {
    gpu.seen_uuid = uuid;
    *d = kHandle;
    return 0;
  };
  api.device_get_clock_info = [](NvmlApi::Device, int type, unsigned* mhz) {
    *mhz = type == 1 ? (gpu.locked ? gpu.base_sm_mhz : gpu.sm_mhz) : 3201u;
    return 0;
  };
  api.device_get_max_clock_info = [](NvmlApi::Device, int type, unsigned* mhz) {
    *mhz = type == 1 ? 1980u : 3201u;
    return 0;
  };
  api.device_get_current_clocks_event_reasons = [](NvmlApi::Device, unsigned long long* r) {
    *r = gpu.reasons;
    return 0;
  };
  api.device_get_margin_temperature = [](NvmlApi::Device, NvmlApi::MarginTemperature* m) {
    if (m->version != NvmlApi::kMarginTemperatureV1) return 25;  // NVML_ERROR_ARGUMENT_VERSION_MISMATCH
    m->margin_c = gpu.margin_c;
    return 0;
  };
  api.device_set_gpu_locked_clocks = [](NvmlApi::Device, unsigned lo, unsigned hi) {
    if (gpu.lock_result != 0) return gpu.lock_result;
    gpu.locked = true;
    gpu.locked_min = lo;
    gpu.locked_max = hi;
    ++gpu.locks;
    return 0;
  };
  api.device_reset_gpu_locked_clocks = [](NvmlApi::Device) {
    gpu.locked = false;
    ++gpu.resets;
    return 0;
  };
  api.device_get_total_energy_consumption = [](NvmlApi::Device, unsigned long long* mj) {
    if (gpu.energy_result != 0) return gpu.energy_result;
    *mj = gpu.energy_mj;
    return 0;
  };
  // Both lists as NVML gives them: the count alone for a null buffer (INSUFFICIENT_SIZE, 7), then
  // the entries; samples newer than the last seen only, NOT_FOUND (6) when there is none.
  api.device_get_compute_running_processes = [](NvmlApi::Device, unsigned* count, NvmlApi::ProcessInfo* infos) {
    ++gpu.running_reads;
    if (*count < gpu.running.size() || !infos) {
      *count = static_cast<unsigned>(gpu.running.size());
      return gpu.running.empty() ? 0 : 7;
    }
    std::copy(gpu.running.begin(), gpu.running.end(), infos);
    *count = static_cast<unsigned>(gpu.running.size());
    return 0;
  };
  api.device_get_process_utilization = [](NvmlApi::Device, NvmlApi::ProcessUtilizationSample* out, unsigned* count,
                                          unsigned long long last_seen) {
    ++gpu.utilization_reads;
    gpu.last_seen_asked = last_seen;
    if (gpu.utilization_result != 0) return gpu.utilization_result;
    std::vector<NvmlApi::ProcessUtilizationSample> newer;
    for (const auto& s : gpu.samples)
      if (s.time_stamp_us > last_seen) newer.push_back(s);
    if (newer.empty()) return 6;
    if (!out || *count < newer.size()) {
      *count = static_cast<unsigned>(newer.size());
      return 7;
    }
    std::copy(newer.begin(), newer.end(), out);
    *count = static_cast<unsigned>(newer.size());
    return 0;
  };
  api.error_string = [](int rc) { return rc == 4 ? "Insufficient Permissions" : rc == 3 ? "Not Supported" : "Unknown Error"; };
  return api;
}

std::string energy_error(NvmlDeviceControl& control) {
  try {
    control.energy_counter()->read();
  } catch (const BackendError& e) {
    return e.what();
  }
  return "no error";
}

std::string lock_error(int nvml_result) {
  NvmlApi api = fake_api();
  NvmlDeviceControl control(api, "GPU-1234");
  gpu.lock_result = nvml_result;
  try {
    control.lock_base_clocks();
  } catch (const BackendError& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST(NvmlControl, FindsTheDeviceByUuidAndReadsTelemetry) {
  NvmlDeviceControl control(fake_api(), "GPU-5ed87336-aaaa-bbbb-cccc-000000000000");
  EXPECT_EQ(gpu.seen_uuid, "GPU-5ed87336-aaaa-bbbb-cccc-000000000000");
  EXPECT_TRUE(control.unavailable_reason().empty());
  EXPECT_DOUBLE_EQ(control.rated_clocks().sm_mhz, 1980.0);
  gpu.reasons = 0x20;
  const auto c = control.clocks();
  EXPECT_DOUBLE_EQ(c.sm_mhz, 1980.0);
  EXPECT_DOUBLE_EQ(c.memory_mhz, 3201.0);
  EXPECT_EQ(c.event_reasons, std::optional<std::uint64_t>(0x20));
  EXPECT_EQ(control.thermal_margin_c(), std::optional<double>(42.0));
}

// A margin reading costs ~0.6 ms on an H200: one is reused for 100 ms, across thermal guards.
TEST(NvmlControl, TheThermalMarginIsReadAtMostEvery100Ms) {
  NvmlDeviceControl control(fake_api(), "GPU-1");
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_EQ(control.thermal_margin_c(), std::optional<double>(42.0));
  gpu.margin_c = 10;
  const auto again = control.thermal_margin_c();
  if (std::chrono::steady_clock::now() - t0 < NvmlDeviceControl::kMarginReuse) {
    EXPECT_EQ(again, std::optional<double>(42.0)) << "read again within 100 ms";
  }
  std::this_thread::sleep_for(NvmlDeviceControl::kMarginReuse + std::chrono::milliseconds(5));
  EXPECT_EQ(control.thermal_margin_c(), std::optional<double>(10.0));
}

TEST(NvmlControl, LocksToTheRatedTdpClockAndResets) {
  NvmlDeviceControl control(fake_api(), "GPU-1");
  const auto locked = control.lock_base_clocks();
  EXPECT_TRUE(gpu.locked);
  EXPECT_EQ(gpu.locked_min, 0xffffff01u);  // NVML_CLOCK_LIMIT_ID_TDP, as ncu --clock-control base
  EXPECT_EQ(gpu.locked_max, 0xffffff01u);
  EXPECT_DOUBLE_EQ(locked.sm_mhz, 1590.0);
  control.restore_clocks();
  EXPECT_FALSE(gpu.locked);
  EXPECT_EQ(gpu.resets, 1);
}

TEST(NvmlControl, PermissionAndSupportErrorsNameTheFix) {
  const std::string denied = lock_error(4);
  EXPECT_NE(denied.find("locking GPU clocks needs root/admin rights (Insufficient Permissions"), std::string::npos)
      << denied;
  EXPECT_NE(denied.find("Run as root, or use clock_control none"), std::string::npos);
  EXPECT_NE(lock_error(3).find("this GPU cannot lock its clocks"), std::string::npos);
  EXPECT_NE(lock_error(999).find("nvmlDeviceSetGpuLockedClocks failed: Unknown Error"), std::string::npos);
}

TEST(NvmlControl, WithoutNvmlTelemetryIsEmptyAndLockingIsRefused) {
  NvmlApi missing;
  missing.unavailable_reason = "libnvidia-ml.so.1 could not be loaded";
  NvmlDeviceControl control(missing, "GPU-1");
  EXPECT_TRUE(std::isnan(control.clocks().sm_mhz));
  EXPECT_FALSE(control.thermal_margin_c().has_value());
  try {
    control.lock_base_clocks();
    FAIL();
  } catch (const BackendError& e) {
    EXPECT_NE(std::string(e.what()).find("NVML is unavailable: libnvidia-ml.so.1 could not be loaded"),
              std::string::npos)
        << e.what();
  }
}

// A machine without NVML's library (a container started without the driver's utility libraries)
// said only that it "comes with the NVIDIA driver".
TEST(NvmlControl, AMissingLibrarySaysWhatToDo) {
  const std::string reason =
      kscope::device::unloadable_nvml("libnvidia-ml.so.1: cannot open shared object file: No such file or directory");
  EXPECT_NE(reason.find("libnvidia-ml.so.1 could not be loaded (libnvidia-ml.so.1: cannot open shared object file"),
            std::string::npos)
      << reason;
  for (const char* fix : {"install the driver", "NVIDIA_DRIVER_CAPABILITIES=compute,utility", "LD_LIBRARY_PATH"})
    EXPECT_NE(reason.find(fix), std::string::npos) << fix << " in: " << reason;
}

TEST(NvmlControl, ClockLockRestoresOnScopeExitAndOnSignal) {
  NvmlDeviceControl control(fake_api(), "GPU-1");
  {
    kscope::detail::ClockLock lock(control);
    EXPECT_TRUE(gpu.locked);
  }
  EXPECT_FALSE(gpu.locked);
  EXPECT_EQ(gpu.resets, 1);

  static volatile std::sig_atomic_t handled = 0;
  auto previous = std::signal(SIGTERM, [](int) { handled = 1; });
  {
    kscope::detail::ClockLock lock(control);
    std::raise(SIGTERM);
    EXPECT_FALSE(gpu.locked);  // restored by the signal, before the application's handler ran
    EXPECT_EQ(handled, 1);
  }
  std::signal(SIGTERM, previous);
  EXPECT_EQ(gpu.resets, 2);  // and not reset a second time at scope exit
}

TEST(NvmlControl, ReadsTheEnergyCounterTimedAtTheMiddleOfTheCall) {
  NvmlDeviceControl control(fake_api(), "GPU-1");
  kscope::EnergyCounter* counter = control.energy_counter();
  ASSERT_NE(counter, nullptr);
  gpu.energy_mj = 0xfffffffffffffff0ull;  // NVML's unsigned 64-bit value, whole
  const double before = counter->now_s();
  const kscope::EnergyReading reading = counter->read();
  EXPECT_EQ(reading.millijoules, 0xfffffffffffffff0ull);
  EXPECT_GE(reading.time_s, before);
  EXPECT_LE(reading.time_s, counter->now_s());
}

TEST(NvmlControl, AMissingEnergyCounterSaysWhy) {
  NvmlDeviceControl control(fake_api(), "GPU-1");
  gpu.energy_result = 3;
  EXPECT_EQ(energy_error(control),
            "this GPU has no total-energy counter (nvmlDeviceGetTotalEnergyConsumption: Not Supported, NVML error 3; "
            "NVIDIA's data-center GPUs have one from Volta on). Measure without the nvml__ energy metrics");
  gpu.energy_result = 999;
  EXPECT_NE(energy_error(control).find("nvmlDeviceGetTotalEnergyConsumption failed: Unknown Error, NVML error 999"),
            std::string::npos);

  NvmlApi old_driver = fake_api();
  old_driver.device_get_total_energy_consumption = nullptr;
  NvmlDeviceControl without_symbol(old_driver, "GPU-1");
  EXPECT_NE(energy_error(without_symbol).find("need nvmlDeviceGetTotalEnergyConsumption, which this driver's NVML "
                                              "lacks (driver too old)"),
            std::string::npos);

  NvmlApi missing;
  missing.unavailable_reason = "libnvidia-ml.so.1 could not be loaded";
  NvmlDeviceControl without_nvml(missing, "GPU-1");
  EXPECT_EQ(energy_error(without_nvml),
            "the energy metrics read the GPU's energy counter through NVML, which is unavailable: "
            "libnvidia-ml.so.1 could not be loaded. Measure without the nvml__ energy metrics");
}

// kscope doctor's energy row, from the same fake NVML: GPU-0 counts energy, GPU-1 has no counter,
// GPU-2 is not found by NVML. The counter is read once per device, and a failure is reported as
// the energy metrics would raise it, in the check and in the JSON facts.
TEST(DoctorEnergy, SaysWhichDevicesCountEnergy) {
  NvmlApi api = fake_api();
  api.device_get_handle_by_uuid = [](const char* uuid, NvmlApi::Device* d) {
    if (std::string(uuid) == "GPU-2") return 6;  // NVML_ERROR_NOT_FOUND
    *d = reinterpret_cast<NvmlApi::Device>(std::string(uuid) == "GPU-1" ? 0x2 : 0x1);
    return 0;
  };
  api.device_get_total_energy_consumption = [](NvmlApi::Device d, unsigned long long* mj) {
    if (d != kHandle) return 3;  // NVML_ERROR_NOT_SUPPORTED
    *mj = gpu.energy_mj;
    return 0;
  };
  kscope::DoctorFacts facts;
  facts.driver.devices.resize(3);
  for (int i = 0; i < 3; ++i) {
    facts.driver.devices[i].ordinal = i;
    facts.driver.devices[i].uuid = "GPU-" + std::to_string(i);
  }
  facts.nvml = kscope::doctor::nvml_facts(api, facts.driver.devices);
  const kscope::DoctorReport report = kscope::assess(facts);

  const auto energy = std::find_if(report.checks.begin(), report.checks.end(), [](auto& c) { return c.id == "energy"; });
  ASSERT_NE(energy, report.checks.end());
  EXPECT_EQ(energy->status, kscope::CheckStatus::warning);
  EXPECT_NE(energy->summary.find("is readable on 1 of 3 device(s)"), std::string::npos) << energy->summary;
  ASSERT_EQ(energy->details.size(), 2u);
  EXPECT_EQ(energy->details[0],
            "device #1: this GPU has no total-energy counter (nvmlDeviceGetTotalEnergyConsumption: Not Supported, "
            "NVML error 3; NVIDIA's data-center GPUs have one from Volta on). Measure without the nvml__ energy metrics");
  EXPECT_EQ(energy->details[1], "device #2: not read: NVML did not find it");
  EXPECT_NE(energy->fix.find("nvml__energy_per_run"), std::string::npos);

  const auto devices = nlohmann::json::parse(kscope::to_json(report))["facts"]["devices"];
  EXPECT_EQ(devices[0]["energy_counter_readable"], true);
  EXPECT_EQ(devices[0]["energy_counter_problem"], "");
  EXPECT_EQ(devices[1]["energy_counter_readable"], false);
  EXPECT_EQ(devices[1]["energy_counter_problem"], energy->details[0].substr(std::string("device #1: ").size()));
  EXPECT_TRUE(devices[2]["energy_counter_readable"].is_null());
  EXPECT_NE(kscope::to_text(report).find("[warn] energy"), std::string::npos);
}

TEST(DoctorEnergy, EveryCounterReadableIsOkAndNoNvmlSkipsTheCheck) {
  kscope::DoctorFacts facts;
  facts.driver.devices.resize(2);
  facts.driver.devices[1].ordinal = 1;
  facts.nvml = kscope::doctor::nvml_facts(fake_api(), facts.driver.devices);
  kscope::DoctorReport report = kscope::assess(facts);
  auto energy = [&] {
    return *std::find_if(report.checks.begin(), report.checks.end(), [](auto& c) { return c.id == "energy"; });
  };
  EXPECT_EQ(energy().status, kscope::CheckStatus::ok);
  EXPECT_EQ(energy().summary,
            "the GPU's energy counter (nvmlDeviceGetTotalEnergyConsumption, read once) is readable: the energy "
            "metrics (nvml__*) can be measured");

  NvmlApi missing;
  missing.unavailable_reason = "libnvidia-ml.so.1 could not be loaded";
  facts.driver.devices.assign(1, {});
  facts.nvml = kscope::doctor::nvml_facts(missing, facts.driver.devices);
  report = kscope::assess(facts);
  EXPECT_EQ(energy().status, kscope::CheckStatus::skipped);
  EXPECT_FALSE(facts.driver.devices[0].energy_counter_readable.has_value());
}

namespace {

const unsigned kSelf = static_cast<unsigned>(getpid());

NvmlApi::ProcessInfo process(unsigned pid) { return {pid, 1 << 20, 0, 0}; }
NvmlApi::ProcessUtilizationSample busy(unsigned pid, unsigned long long at_us, unsigned sm = 50) {
  return {pid, at_us, sm, 0, 0, 0};
}

// The next other_processes() reads NVML again.
void after_reuse() { std::this_thread::sleep_for(NvmlDeviceControl::kOthersReuse + std::chrono::milliseconds(2)); }

}  // namespace

TEST(NvmlOtherProcesses, AloneOnTheGpuNoUtilizationIsRead) {
  NvmlDeviceControl control(fake_api(), "GPU-1");
  gpu.running = {process(kSelf)};
  EXPECT_TRUE(control.other_processes().empty());
  EXPECT_EQ(gpu.running_reads, 1);  // one call, with room for more than one process
  EXPECT_EQ(gpu.utilization_reads, 0);
}

TEST(NvmlOtherProcesses, AnotherProcessBusyOnTheGpuIsNamedAndAnIdleOneIsNot) {
  NvmlDeviceControl control(fake_api(), "GPU-1");
  gpu.running = {process(kSelf), process(4242)};
  gpu.samples = {busy(kSelf, 1000), busy(4242, 1000, 97)};
  EXPECT_EQ(control.other_processes(), std::vector<unsigned>{4242});
  EXPECT_EQ(gpu.last_seen_asked, 0u);
  // The next sample: the other process holds its context but runs nothing (NVML returns no sample of it).
  gpu.samples.push_back(busy(kSelf, 2000));
  after_reuse();
  EXPECT_TRUE(control.other_processes().empty());
  EXPECT_EQ(gpu.last_seen_asked, 1000u) << "only the samples newer than those read";
}

TEST(NvmlOtherProcesses, WithoutANewerSampleTheLastAnswerStands) {
  NvmlDeviceControl control(fake_api(), "GPU-1");
  gpu.running = {process(kSelf), process(4242)};
  gpu.samples = {busy(kSelf, 1000), busy(4242, 1000)};
  EXPECT_EQ(control.other_processes(), std::vector<unsigned>{4242});
  after_reuse();
  EXPECT_EQ(control.other_processes(), std::vector<unsigned>{4242}) << "NVML samples every ~100 ms: nothing newer yet";
  EXPECT_EQ(gpu.last_seen_asked, 1000u);
}

TEST(NvmlOtherProcesses, ReadAtMostOnceInTheReuseInterval) {
  NvmlDeviceControl control(fake_api(), "GPU-1");
  gpu.running = {process(kSelf), process(4242)};
  gpu.samples = {busy(4242, 1000), busy(kSelf, 1000)};
  const auto t0 = std::chrono::steady_clock::now();
  control.other_processes();
  const int reads = gpu.running_reads;
  control.other_processes();
  if (std::chrono::steady_clock::now() - t0 < NvmlDeviceControl::kOthersReuse) {
    EXPECT_EQ(gpu.running_reads, reads);
  }
}

// In a container NVML's pids are the host's: this process is one of the busy pids under another
// number, so one busy pid is no evidence of another process, and two are.
TEST(NvmlOtherProcesses, ManyProcessesAreReadWhole) {
  NvmlDeviceControl control(fake_api(), "GPU-1");
  gpu.running.push_back(process(kSelf));
  for (unsigned pid = 100; pid < 140; ++pid) gpu.running.push_back(process(pid));
  gpu.samples = {busy(kSelf, 1000)};
  for (unsigned pid = 100; pid < 140; ++pid) gpu.samples.push_back(busy(pid, 1000, pid == 139 ? 10 : 0));
  EXPECT_EQ(control.other_processes(), std::vector<unsigned>{139});
  EXPECT_EQ(gpu.running_reads, 2) << "the first call said how many";
}

TEST(NvmlOtherProcesses, UnderAnotherPidNamespaceTwoBusyProcessesAreNeeded) {
  NvmlDeviceControl control(fake_api(), "GPU-1");
  gpu.running = {process(900001), process(900002)};
  gpu.samples = {busy(900001, 1000)};
  EXPECT_TRUE(control.other_processes().empty());
  gpu.samples.push_back(busy(900001, 2000));
  gpu.samples.push_back(busy(900002, 2000));
  after_reuse();
  EXPECT_EQ(control.other_processes(), (std::vector<unsigned>{900001, 900002}));
}

TEST(NvmlOtherProcesses, WhereNvmlCannotTellNothingIsFlagged) {
  NvmlApi old_driver = fake_api();
  old_driver.device_get_compute_running_processes = nullptr;
  NvmlDeviceControl without(old_driver, "GPU-1");
  EXPECT_TRUE(without.other_processes().empty());

  NvmlDeviceControl control(fake_api(), "GPU-1");
  gpu.running = {process(kSelf), process(4242)};
  gpu.utilization_result = 3;  // NVML_ERROR_NOT_SUPPORTED: not asked again
  EXPECT_TRUE(control.other_processes().empty());
  after_reuse();
  EXPECT_TRUE(control.other_processes().empty());
  EXPECT_EQ(gpu.utilization_reads, 1);
}

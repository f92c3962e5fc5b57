// What the counter backend says when counters cannot be read, fed with fake CUPTI results and
// machine facts, and what CUDA failures before any GPU work say: each must name the problem and
// the fix.
#include <gtest/gtest.h>

#include <cuda_runtime_api.h>

#include "backends/counters/counter_errors.hpp"
#include "backends/cupti_subscriber.hpp"
#include "core/model/caller_language.hpp"
#include "device/cuda_check.hpp"
#include "kscope/errors.hpp"
#include "kscope/profile.hpp"

using namespace kscope;
using counters::AccessFacts;

namespace {

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

TEST(CounterErrors, ReadsRmProfilingAdminOnly) {
  EXPECT_EQ(counters::parse_admin_only("ResmanDebugLevel: 4294967295\nRmProfilingAdminOnly: 1\nX: 0\n"), true);
  EXPECT_EQ(counters::parse_admin_only("RmProfilingAdminOnly: 0\n"), false);
  EXPECT_EQ(counters::parse_admin_only("EnableMSI: 1\n"), std::nullopt);
  EXPECT_EQ(counters::parse_admin_only("XRmProfilingAdminOnly: 1\n"), std::nullopt);
}

TEST(CounterErrors, PermissionDeniedNamesTheDriverOptionTheCapabilityAndRoot) {
  const std::string m = counters::counter_error_message(CUPTI_ERROR_INSUFFICIENT_PRIVILEGES, "cuptiRangeProfilerEnable",
                                                        AccessFacts{true, false});
  EXPECT_TRUE(has(m, "cuptiRangeProfilerEnable failed: CUPTI_ERROR_INSUFFICIENT_PRIVILEGES (35)")) << m;
  EXPECT_TRUE(has(m, "ERR_NVGPUCTRPERM")) << m;
  EXPECT_TRUE(has(m, "RmProfilingAdminOnly: 1 and this process is not root")) << m;
  EXPECT_TRUE(has(m, "NVreg_RestrictProfilingToAdminUsers=0")) << m;
  EXPECT_TRUE(has(m, "--cap-add=SYS_ADMIN")) << m;
  EXPECT_TRUE(has(m, "run as root")) << m;
  EXPECT_TRUE(has(m, "Backend::automatic falls back")) << m;
  // Without counters, the roofline from durations and declared work still says what limits a kernel.
  EXPECT_TRUE(has(m, "(Settings::work), their rows say how close it comes to the memory and compute roofs")) << m;
  EXPECT_TRUE(has(m, "Why is it slow, without counters")) << m;

  const std::string container = counters::counter_error_message(CUPTI_ERROR_INSUFFICIENT_PRIVILEGES, "x",
                                                                AccessFacts{false, true});
  EXPECT_TRUE(has(container, "RmProfilingAdminOnly: 0")) << container;
  EXPECT_TRUE(has(container, "container without SYS_ADMIN")) << container;
  EXPECT_TRUE(has(counters::counter_error_message(CUPTI_ERROR_INSUFFICIENT_PRIVILEGES, "x", AccessFacts{}),
                  "could not be read"));
}

TEST(CounterErrors, VirtualisedAndUnsupportedPlatforms) {
  const AccessFacts facts;
  EXPECT_TRUE(has(counters::counter_error_message(CUPTI_ERROR_VIRTUALIZED_DEVICE_INSUFFICIENT_PRIVILEGES, "x", facts),
                  "enable_profiling=1"));
  EXPECT_TRUE(has(counters::counter_error_message(CUPTI_ERROR_VIRTUALIZED_DEVICE_NOT_SUPPORTED, "x", facts),
                  "virtualised GPU"));
  EXPECT_TRUE(has(counters::counter_error_message(CUPTI_ERROR_MIG_DEVICE_NOT_SUPPORTED, "x", facts), "MIG"));
  EXPECT_TRUE(has(counters::counter_error_message(CUPTI_ERROR_HARDWARE_BUSY, "x", facts), "dcgmi profile --pause"));
  // Codes that are not about counter access are left to the generic CUPTI check.
  EXPECT_EQ(counters::counter_error_message(CUPTI_ERROR_INVALID_PARAMETER, "x", facts), "");
}

TEST(CounterErrors, AnotherProfilerOwningCuptiIsItsOwnError) {
  EXPECT_THROW(counters::check_counters(CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED, "cuptiProfilerInitialize"),
               cupti::OtherProfilerError);
  const std::string m = cupti::other_profiler_message("cuptiSubscribe_v2", "Nsight Compute");
  EXPECT_TRUE(has(m, "another profiler (Nsight Compute) owns CUPTI")) << m;
  EXPECT_TRUE(has(m, "Backend::events")) << m;
  EXPECT_THROW(counters::check_counters(CUPTI_ERROR_INSUFFICIENT_PRIVILEGES, "cuptiRangeProfilerEnable"), BackendError);
  EXPECT_THROW(counters::check_counters(CUPTI_ERROR_INVALID_OPERATION, "cuptiRangeProfilerSetConfig"), BackendError);
  EXPECT_NO_THROW(counters::check_counters(CUPTI_SUCCESS, "x"));
}

TEST(CounterErrors, DeviceSupportFieldsEachGiveTheirReason) {
  CUpti_Profiler_DeviceSupported_Params p{};
  p.isSupported = CUPTI_PROFILER_CONFIGURATION_SUPPORTED;
  EXPECT_EQ(counters::device_support_problem(p, "NVIDIA H200"), "");
  p.isSupported = CUPTI_PROFILER_CONFIGURATION_UNSUPPORTED;
  p.architecture = p.sli = p.confidentialCompute = p.cmp = p.wsl = CUPTI_PROFILER_CONFIGURATION_SUPPORTED;
  p.vGpu = CUPTI_PROFILER_CONFIGURATION_DISABLED;
  std::string m = counters::device_support_problem(p, "GRID A100-40C");
  EXPECT_TRUE(has(m, "GRID A100-40C")) << m;
  EXPECT_TRUE(has(m, "hypervisor has disabled")) << m;
  EXPECT_FALSE(has(m, "SLI")) << m;
  p.vGpu = CUPTI_PROFILER_CONFIGURATION_SUPPORTED;
  p.confidentialCompute = CUPTI_PROFILER_CONFIGURATION_UNSUPPORTED;
  m = counters::device_support_problem(p, "H100");
  EXPECT_TRUE(has(m, "confidential computing")) << m;
  EXPECT_TRUE(has(m, "Backend::cupti")) << m;
}

// Before any GPU work: the runtime's own words ("CUDA driver version is insufficient" when no
// driver is installed at all) mislead, so kscope says what is missing and points to the doctor,
// in the caller's language.
TEST(CudaErrors, NoDriverOrNoGpuSaysSoAndPointsToTheDoctor) {
  const auto message = [](cudaError_t status) {
    try {
      device::check_cuda(status, "cudaGetDeviceCount");
    } catch (const CudaError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const std::string no_driver = message(cudaErrorInsufficientDriver);
  EXPECT_TRUE(has(no_driver, "no usable NVIDIA driver: none is installed (no libcuda.so.1), or it is older than this "
                             "CUDA 13.0 runtime needs (cudaGetDeviceCount failed: cudaErrorInsufficientDriver)"))
      << no_driver;
  EXPECT_TRUE(has(no_driver, "Run `kscope doctor` to see what is missing here")) << no_driver;
  EXPECT_FALSE(has(no_driver, "insufficient")) << no_driver;
  EXPECT_TRUE(has(message(cudaErrorNoDevice), "no NVIDIA GPU is visible")) << message(cudaErrorNoDevice);
  EXPECT_TRUE(has(message(cudaErrorStubLibrary), "stub")) << message(cudaErrorStubLibrary);
  detail::set_caller(detail::Caller::python);
  const std::string python = message(cudaErrorInsufficientDriver);
  detail::set_caller(detail::Caller::cpp);
  EXPECT_TRUE(has(python, "Run kscope.doctor() to see what is missing here")) << python;
}

// End to end on a machine without a GPU (the CPU CI machine): profile() says the same.
TEST(CudaErrors, ProfileWithoutADriverSaysSo) {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) == cudaSuccess && devices > 0) GTEST_SKIP() << "a GPU is usable here";
  Settings s;
  s.verbosity = Verbosity::quiet;
  try {
    profile(Sweep(), s, [](const Config&) {});
    FAIL() << "profile() ran without a GPU";
  } catch (const BackendError& e) {
    const std::string m = e.what();
    EXPECT_TRUE(has(m, "no usable NVIDIA driver") || has(m, "no NVIDIA GPU is visible")) << m;
    EXPECT_TRUE(has(m, "kscope doctor")) << m;
  }
}

// Backend::automatic's policy: which failures of the counters backend lead to a duration backend.
#include <gtest/gtest.h>

#include "backends/automatic_backend.hpp"
#include "backends/cupti_subscriber.hpp"
#include "kscope/errors.hpp"

using namespace kscope;

namespace {

template <typename E>
AutomaticFallback after(E error) {
  return automatic_fallback(std::make_exception_ptr(error));
}

}  // namespace

TEST(AutomaticBackend, FallsBackOnlyWhenCountersCannotWorkHere) {
  EXPECT_EQ(after(BackendError("ERR_NVGPUCTRPERM: counters need admin rights")), AutomaticFallback::cupti);
  EXPECT_EQ(after(cupti::OtherProfilerError("Nsight Systems owns CUPTI")), AutomaticFallback::events);
}

TEST(AutomaticBackend, AKscopeBugIsRaisedNotHiddenByAFallback) {
  EXPECT_EQ(after(InternalError("range profiler state (kscope bug)")), AutomaticFallback::none);
}

TEST(AutomaticBackend, TheCallersMistakesAndAMissingGpuAreRaised) {
  EXPECT_EQ(after(ConfigError("unknown metric 'dram__byte_read.sum'")), AutomaticFallback::none);
  EXPECT_EQ(after(CudaError("no CUDA device")), AutomaticFallback::none);
  EXPECT_EQ(after(std::runtime_error("anything else")), AutomaticFallback::none);
}

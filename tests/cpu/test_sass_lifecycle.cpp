// The SASS metrics' lifecycle (sass_lifecycle.hpp) against a fake CUPTI that keeps CUPTI's rules
// (cupti_sass_metrics.h): a device's configuration set once (a second set is a broken rule, as is
// CUDA 13.0's set after an unset, which fails with CUPTI_ERROR_OUT_OF_MEMORY); a context enabled
// once at a time; its records read and counting disabled only inside a range.
// Any number of profiles in one process each get their counts; every failure is said and undoes
// exactly what was done.
#include <gtest/gtest.h>

#include <functional>
#include <set>
#include <string>
#include <vector>

#include "backends/pcsampling/sass_lifecycle.hpp"
#include "kscope/errors.hpp"

namespace {

using kscope::BackendError;
using kscope::pcsampling::SassCalls;
using kscope::pcsampling::SassConfigurations;
using kscope::pcsampling::SassCount;
using kscope::pcsampling::SassRange;

struct FakeCupti {
  std::set<int> configured;
  bool enabled = false;
  int sets = 0, enables = 0, reads = 0, disables = 0, broken_rules = 0;
  bool refuse_set = false, refuse_enable = false, refuse_read = false;

  void set_config(int device) {
    ++sets;
    if (configured.contains(device)) broken("CUPTI_ERROR_INVALID_OPERATION: set twice");
    if (refuse_set) throw BackendError("cuptiSassMetricsSetConfig: CUPTI_ERROR_OUT_OF_MEMORY");
    configured.insert(device);
  }
  [[noreturn]] void broken(const std::string& what) {
    ++broken_rules;
    throw BackendError(what);
  }
};

class FakeCalls final : public SassCalls {
 public:
  explicit FakeCalls(FakeCupti& cupti, int device = 0) : cupti_(cupti), device_(device) {}
  void enable() override {
    ++cupti_.enables;
    if (!cupti_.configured.contains(device_)) cupti_.broken("CUPTI_ERROR_INVALID_OPERATION: enable before set");
    if (cupti_.enabled) cupti_.broken("CUPTI_ERROR_INVALID_OPERATION: enabled twice");
    if (cupti_.refuse_enable) throw BackendError("cuptiSassMetricsEnable: CUPTI_ERROR_NOT_SUPPORTED");
    cupti_.enabled = true;
  }
  std::vector<SassCount> read() override {
    ++cupti_.reads;
    if (!cupti_.enabled) cupti_.broken("CUPTI_ERROR_INVALID_OPERATION: read outside the range");
    if (cupti_.refuse_read) throw BackendError("cuptiSassMetricsFlushData: CUPTI_ERROR_UNKNOWN");
    return {{"kernel", 0x80, 4, 128}};
  }
  void disable() override {
    ++cupti_.disables;
    if (!cupti_.enabled) cupti_.broken("CUPTI_ERROR_INVALID_OPERATION: disabled twice");
    cupti_.enabled = false;
  }

 private:
  FakeCupti& cupti_;
  int device_;
};

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const BackendError& e) {
    return e.what();
  }
  return "";
}

TEST(SassLifecycle, EveryProfileOfTheProcessGetsItsCountsFromOneConfiguration) {
  FakeCupti cupti;
  SassConfigurations configurations;
  for (int profile = 0; profile < 7; ++profile) {
    configurations.configure(0, [&] { cupti.set_config(0); });
    FakeCalls calls(cupti);
    for (int run = 0; run < 5; ++run) {
      SassRange range(calls);
      const std::vector<SassCount> counts = range.finish();
      ASSERT_EQ(counts.size(), 1u) << "profile " << profile << ", run " << run;
      EXPECT_EQ(counts[0].executed, 4u);
    }
  }
  EXPECT_EQ(cupti.sets, 1);
  EXPECT_EQ(cupti.enables, 35);
  EXPECT_EQ(cupti.disables, 35);
  EXPECT_EQ(cupti.broken_rules, 0);
}

TEST(SassLifecycle, EachDeviceIsConfiguredOnce) {
  FakeCupti cupti;
  SassConfigurations configurations;
  for (int i = 0; i < 3; ++i)
    for (int device : {0, 1}) configurations.configure(device, [&] { cupti.set_config(device); });
  EXPECT_EQ(cupti.sets, 2);
  EXPECT_EQ(cupti.configured, (std::set<int>{0, 1}));
  EXPECT_EQ(cupti.broken_rules, 0);
}

TEST(SassLifecycle, AConfigurationThatFailedIsSaidInEveryProfileAndNotTriedAgain) {
  FakeCupti cupti;
  cupti.refuse_set = true;
  SassConfigurations configurations;
  for (int profile = 0; profile < 4; ++profile)
    EXPECT_EQ(error_of([&] { configurations.configure(0, [&] { cupti.set_config(0); }); }),
              "cuptiSassMetricsSetConfig: CUPTI_ERROR_OUT_OF_MEMORY");
  EXPECT_EQ(cupti.sets, 1);
  // Another device is its own.
  cupti.refuse_set = false;
  EXPECT_EQ(error_of([&] { configurations.configure(1, [&] { cupti.set_config(1); }); }), "");
}

TEST(SassLifecycle, ARangeLeftUnfinishedIsDisabledOnceAndTheNextOneCounts) {
  FakeCupti cupti;
  cupti.set_config(0);
  FakeCalls calls(cupti);
  { SassRange abandoned(calls); }
  EXPECT_EQ(cupti.disables, 1);
  EXPECT_FALSE(cupti.enabled);
  SassRange next(calls);
  EXPECT_EQ(next.finish().size(), 1u);
  EXPECT_EQ(cupti.broken_rules, 0);
}

TEST(SassLifecycle, AFailedReadStillDisablesOnceAndSaysTheReadsError) {
  FakeCupti cupti;
  cupti.set_config(0);
  FakeCalls calls(cupti);
  {
    SassRange range(calls);
    cupti.refuse_read = true;
    EXPECT_EQ(error_of([&] { range.finish(); }), "cuptiSassMetricsFlushData: CUPTI_ERROR_UNKNOWN");
  }  // destroyed after the failed finish: not disabled again
  EXPECT_EQ(cupti.disables, 1);
  EXPECT_FALSE(cupti.enabled);
  EXPECT_EQ(cupti.broken_rules, 0);
  EXPECT_THROW({
    SassRange range(calls);
    range.finish();
  }, BackendError);  // still refused, still one disable a range
  EXPECT_EQ(cupti.disables, 2);
  EXPECT_EQ(cupti.broken_rules, 0);
}

TEST(SassLifecycle, AFailedEnableLeavesNothingToUndo) {
  FakeCupti cupti;
  cupti.set_config(0);
  cupti.refuse_enable = true;
  FakeCalls calls(cupti);
  EXPECT_EQ(error_of([&] { SassRange range(calls); }), "cuptiSassMetricsEnable: CUPTI_ERROR_NOT_SUPPORTED");
  EXPECT_EQ(cupti.disables, 0);
  EXPECT_EQ(cupti.broken_rules, 0);
}

TEST(SassLifecycle, ARangeFinishesOnce) {
  FakeCupti cupti;
  cupti.set_config(0);
  FakeCalls calls(cupti);
  SassRange range(calls);
  range.finish();
  EXPECT_THROW(range.finish(), kscope::InternalError);
  EXPECT_EQ(cupti.disables, 1);
  EXPECT_EQ(cupti.broken_rules, 0);
}

}  // namespace

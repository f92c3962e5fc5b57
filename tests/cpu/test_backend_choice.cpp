// Backend::from_metrics, the default: the backend follows Settings::metrics (chosen_backend), and
// the checks that depend on it.
#include <gtest/gtest.h>

#include "kscope/backend_registry.hpp"
#include "kscope/errors.hpp"
#include "kscope/settings.hpp"

using namespace kscope;

namespace {

Backend chosen(std::vector<std::string> metrics, Backend backend = Backend::from_metrics) {
  Settings s;
  s.backend = backend;
  s.metrics = std::move(metrics);
  return chosen_backend(s);
}

std::string refusal(std::vector<std::string> metrics) {
  try {
    chosen(std::move(metrics));
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "accepted";
}

}  // namespace

TEST(BackendChoice, TheDefaultChoosesFromTheMetrics) {
  EXPECT_EQ(Settings{}.backend, Backend::from_metrics);
  EXPECT_EQ(chosen({}), Backend::cupti);  // kernel durations
  EXPECT_EQ(chosen({"dram__throughput.avg.pct_of_peak_sustained_elapsed"}), Backend::counters);
  EXPECT_EQ(chosen({"gpu__time_duration.sum"}), Backend::counters);  // ncu's duration, as ncu measures it
  EXPECT_EQ(chosen({"smsp__sass_inst_executed_op_shared_ld.sum", "launch__sm_count"}), Backend::counters);
  EXPECT_EQ(chosen({"cupti__kernel_duration"}), Backend::cupti);
  EXPECT_EQ(chosen({"events__region_duration"}), Backend::events);
  // A misspelt name still chooses counters, whose metric check names the closest valid ones.
  EXPECT_EQ(chosen({"dram__byte_read.sum"}), Backend::counters);
}

TEST(BackendChoice, AnExplicitBackendIsKept) {
  for (Backend b : registered_backends()) {
    if (b == Backend::from_metrics) continue;  // the one that chooses
    EXPECT_EQ(chosen({}, b), b) << b.name();
    EXPECT_EQ(chosen({"dram__bytes_read.sum"}, b), b);  // the backend's own metric check decides
  }
}

TEST(BackendChoice, ADurationMetricCannotGoWithCounters) {
  const std::string m = refusal({"cupti__kernel_duration", "dram__bytes_read.sum"});
  EXPECT_NE(m.find("Invalid value ['cupti__kernel_duration', 'dram__bytes_read.sum'] for 'metrics': "
                   "'cupti__kernel_duration' is the cupti backend's duration, which is measured alone"),
            std::string::npos)
      << m;
  EXPECT_NE(m.find("measured by Backend::counters"), std::string::npos) << m;
  EXPECT_NE(m.find("list gpu__time_duration.sum"), std::string::npos) << m;
  EXPECT_NE(refusal({"sm__cycles_elapsed.avg", "events__region_duration"}).find("the events backend's duration"),
            std::string::npos);
  Settings s;
  s.metrics = {"cupti__kernel_duration", "dram__bytes_read.sum"};
  EXPECT_THROW(s.validate(), ConfigError);  // before anything runs
}

TEST(BackendChoice, NcuSectionsNameTheBackendThatWouldMeasure) {
  Settings s;
  s.ncu_sections = {"SpeedOfLight"};
  s.metrics = {"dram__bytes_read.sum"};
  try {
    s.validate();
    FAIL() << "ncu_sections without Backend::ncu was accepted";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("the backend is counters"), std::string::npos) << e.what();
  }
}

// The cupti backend's bookkeeping, without a GPU: which copy and fill calls it traces and how many
// records each yields, and how calls, their records and kscope's stream markers become a run's
// measurements, flagged for evaluate()'s findings. (CUPTI's callback names need no GPU.)
#include <gtest/gtest.h>

#include <cupti.h>

#include <algorithm>
#include <set>
#include <string>

#include "backends/cupti/activity_ledger.hpp"
#include "backends/cupti/memory_calls.hpp"
#include "backends/cupti_subscriber.hpp"
#include "kscope/errors.hpp"
#include "test_support.hpp"

namespace {

using kscope::cupti::ActivityLedger;
using kscope::cupti::Call;
using kscope::cupti::memory_call_records;
using kscope::cupti::Records;

std::string callback_name(CUpti_CallbackId cbid) {
  const char* name = nullptr;
  if (cuptiGetCallbackName(CUPTI_CB_DOMAIN_DRIVER_API, cbid, &name) != CUPTI_SUCCESS || !name) return "";
  return name;
}

TEST(CuptiObservedCalls, EveryCopyAndFillEntryPointOfTheDriverIsTraced) {
  const auto& traced = kscope::cupti::memory_callbacks();
  const std::set<CUpti_CallbackId> listed(traced.begin(), traced.end());
  EXPECT_EQ(listed.size(), traced.size()) << "a callback is listed twice";
  std::size_t copies_and_fills = 0;
  for (CUpti_CallbackId cbid = 0; cbid < CUPTI_DRIVER_TRACE_CBID_SIZE; ++cbid) {
    const std::string name = callback_name(cbid);
    // Not cu64Memcpy* and cu64Memset*: the driver exports no such entry points (nor does its stub library).
    if (name.rfind("cuMemcpy", 0) != 0 && name.rfind("cuMemset", 0) != 0) continue;
    ++copies_and_fills;
    EXPECT_TRUE(listed.count(cbid)) << name << " is not traced";
  }
  EXPECT_EQ(copies_and_fills, listed.size());
}

TEST(CuptiObservedCalls, EveryLaunchEntryPointOfTheDriverIsTracedWhileCallsAreObserved) {
  std::set<CUpti_CallbackId> traced(std::begin(kscope::cupti::kLaunchCallbacks), std::end(kscope::cupti::kLaunchCallbacks));
  traced.insert(std::begin(kscope::cupti::kDeprecatedLaunchCallbacks), std::end(kscope::cupti::kDeprecatedLaunchCallbacks));
  for (CUpti_CallbackId cbid = 0; cbid < CUPTI_DRIVER_TRACE_CBID_SIZE; ++cbid) {
    const std::string name = callback_name(cbid);
    // Not cuLaunchHostFunc: a host function runs no kernel.
    const bool launches = name.rfind("cuLaunch", 0) == 0 || name.rfind("cuGraphLaunch", 0) == 0;
    if (launches && name.rfind("cuLaunchHostFunc", 0) != 0) EXPECT_TRUE(traced.count(cbid)) << name << " is not traced";
  }
}

TEST(CuptiObservedCalls, CopiesBetweenNamedMemoriesAndFillsOfNonzeroSizeYieldOneRecord) {
  cuMemcpyDtoDAsync_v2_params copy{};
  copy.ByteCount = 4096;
  EXPECT_EQ(memory_call_records(CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoDAsync_v2, &copy), Records::one);
  copy.ByteCount = 0;  // may be no GPU work at all
  EXPECT_EQ(memory_call_records(CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoDAsync_v2, &copy), Records::any);

  cuMemcpyHtoD_params legacy{};  // the 32-bit ABI's, with an unsigned ByteCount
  legacy.ByteCount = 8;
  EXPECT_EQ(memory_call_records(CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoD, &legacy), Records::one);

  cuMemsetD32Async_ptsz_params fill{};
  fill.N = 3;
  EXPECT_EQ(memory_call_records(CUPTI_DRIVER_TRACE_CBID_cuMemsetD32Async_ptsz, &fill), Records::one);

  cuMemsetD2D8_v2_params area{};
  area.Width = 16;
  EXPECT_EQ(memory_call_records(CUPTI_DRIVER_TRACE_CBID_cuMemsetD2D8_v2, &area), Records::any);  // no rows
  area.Height = 2;
  EXPECT_EQ(memory_call_records(CUPTI_DRIVER_TRACE_CBID_cuMemsetD2D8_v2, &area), Records::one);
}

TEST(CuptiObservedCalls, CopiesThatMayStayOnTheHostOrShareRecordsTakeAnyNumber) {
  cuMemcpyAsync_params unified{};  // through unified addresses: may be host to host
  unified.ByteCount = 4096;
  EXPECT_EQ(memory_call_records(CUPTI_DRIVER_TRACE_CBID_cuMemcpyAsync, &unified), Records::any);
  cuMemcpy2DAsync_v2_params descriptor{};
  EXPECT_EQ(memory_call_records(CUPTI_DRIVER_TRACE_CBID_cuMemcpy2DAsync_v2, &descriptor), Records::any);
  cuMemcpyBatchAsync_v2_params batch{};
  EXPECT_EQ(memory_call_records(CUPTI_DRIVER_TRACE_CBID_cuMemcpyBatchAsync_v2, &batch), Records::any);
}

TEST(CuptiObservedCalls, LaunchesAreNeitherCopiesNorFills) {
  EXPECT_FALSE(memory_call_records(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, nullptr));
  EXPECT_FALSE(memory_call_records(CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch, nullptr));
  EXPECT_FALSE(memory_call_records(CUPTI_DRIVER_TRACE_CBID_SIZE, nullptr));
}

TEST(CuptiObservedCalls, CopiesAreNamedByTheirKind) {
  EXPECT_EQ(kscope::cupti::copy_name(CUPTI_ACTIVITY_MEMCPY_KIND_HTOD), "[memcpy HtoD]");
  EXPECT_EQ(kscope::cupti::copy_name(CUPTI_ACTIVITY_MEMCPY_KIND_DTOD), "[memcpy DtoD]");
  EXPECT_EQ(kscope::cupti::copy_name(CUPTI_ACTIVITY_MEMCPY_KIND_PTOP), "[memcpy PtoP]");
}

// Run 0 opened regions 0 and 1. In region 0 a kernel ran on the caller's stream, a copy on another
// stream, kscope's marker on the caller's stream once the call returned, then a kernel launched
// after the return; region 1's call never returned through evaluate (no marker).
struct TracedRun {
  ActivityLedger ledger;
  kscope::KernelNames names;

  TracedRun() {
    ledger.called(1, Call{0, 0});
    ledger.called(2, Call{0, 0});
    ledger.called(3, Call{0, 0, Records::one, false, /*marker=*/true});
    ledger.called(4, Call{0, 0, Records::one, /*after_return=*/true});
    ledger.called(5, Call{0, 1});
    ledger.recorded(1, {100, 300}, "_Z6kernelv");
    ledger.recorded(2, {150, 400}, "[memcpy DtoD]");
    ledger.recorded(3, {300, 302}, "_ZN6kscope6device13stream_markerEv");
    ledger.recorded(4, {350, 500}, "_Z4latev");
    ledger.recorded(5, {600, 900}, "_Z6kernelv");
    ledger.recorded(77, {0, 1000}, "_Z7outsidev");  // a call made outside the regions
  }
  std::vector<kscope::RunMeasurement> measurements() {
    return kscope::cupti::measurements_of(ledger.take(), {2}, names);
  }
};

TEST(CuptiActivityLedger, ActivitiesEndingAfterTheMarkerStartedAreUnjoinedAndLateOnesFlagged) {
  TracedRun traced;
  EXPECT_TRUE(traced.ledger.complete());
  const auto runs = traced.measurements();
  ASSERT_EQ(runs.size(), 1u);
  ASSERT_EQ(runs[0].size(), 2u);
  const auto& region = runs[0][0];
  ASSERT_EQ(region.size(), 3u) << "the marker is no activity; the call outside the regions none of theirs";
  EXPECT_EQ(region[0].name, "kernel()");
  EXPECT_FALSE(region[0].unjoined) << "it ended as the marker started: the caller's stream had run it";
  EXPECT_FALSE(region[0].launched_after_return);
  EXPECT_EQ(region[1].name, "[memcpy DtoD]");
  EXPECT_TRUE(region[1].unjoined);
  EXPECT_FALSE(region[1].launched_after_return);
  EXPECT_EQ(region[1].values, std::vector<double>{250});
  EXPECT_EQ(region[2].name, "late()");
  EXPECT_TRUE(region[2].launched_after_return);
  EXPECT_TRUE(region[2].unjoined);
  ASSERT_EQ(runs[0][1].size(), 1u);
  EXPECT_FALSE(runs[0][1][0].unjoined) << "no marker, nothing to be unjoined from";
}

TEST(CuptiActivityLedger, ACallTheCallersStreamWasNotOrderedAfterIsUnjoinedThoughItEndedBeforeTheMarker) {
  TracedRun traced;
  traced.ledger.called(6, Call{0, 0});  // on side streams, ended long before the slow host's marker
  traced.ledger.called(7, Call{0, 0});
  traced.ledger.recorded(6, {110, 120}, "_Z5shortv");  // a buffer delivered during the call
  traced.ledger.unjoined({6, 7, 999});  // the call order's verdict at the return (999: no such call)
  traced.ledger.recorded(7, {120, 130}, "_Z5shortv");
  const auto region = traced.measurements()[0][0];
  ASSERT_EQ(region.size(), 5u);
  EXPECT_EQ(region[1].name, "short()");
  EXPECT_TRUE(region[1].unjoined && region[2].unjoined);
  EXPECT_FALSE(region[0].unjoined);
}

TEST(CuptiActivityLedger, ACallWithoutItsRecordMakesTheMeasurementsFail) {
  TracedRun traced;
  traced.ledger.called(6, Call{0, 1});  // a fill whose record never came
  EXPECT_FALSE(traced.ledger.complete());
  const std::string message = kscope_test::error_of<kscope::BackendError>([&] { traced.measurements(); });
  EXPECT_NE(message.find("no activity record for 1 kernel launch(es), copies or fills"), std::string::npos) << message;
}

TEST(CuptiActivityLedger, AMarkerWithoutItsRecordOrTimestampsMakesTheMeasurementsFail) {
  ActivityLedger unrecorded;
  unrecorded.called(1, Call{0, 0, Records::one, false, true});
  kscope::KernelNames names;
  EXPECT_THROW(kscope::cupti::measurements_of(unrecorded.take(), {1}, names), kscope::BackendError);

  ActivityLedger timeless;
  timeless.called(1, Call{0, 0, Records::one, false, true});
  timeless.recorded(1, {0, 0}, "marker");
  const std::string message = kscope_test::error_of<kscope::BackendError>(
      [&] { kscope::cupti::measurements_of(timeless.take(), {1}, names); });
  EXPECT_NE(message.find("no timestamps (start = end = 0) for 'kscope's stream marker'"), std::string::npos) << message;
}

TEST(CuptiActivityLedger, CallsOfAnyNumberOfRecordsNeedNoneButLeaveTheTraceIncomplete) {
  ActivityLedger ledger;
  ledger.called(1, Call{0, 0, Records::any});
  EXPECT_FALSE(ledger.complete()) << "a forced flush may still bring its records";
  ledger.recorded(1, {10, 20}, "[memset]");
  ledger.recorded(1, {30, 40}, "[memset]");
  kscope::KernelNames names;
  const auto runs = kscope::cupti::measurements_of(ledger.take(), {1}, names);
  EXPECT_EQ(runs[0][0].size(), 2u);

  ActivityLedger none;
  none.called(1, Call{0, 0, Records::any});
  EXPECT_EQ(none.take().unrecorded, 0u);
}

TEST(CuptiActivityLedger, AFailedCallIsForgottenAndADroppedRunLeavesNothing) {
  ActivityLedger ledger;
  ledger.called(1, Call{0, 0});
  ledger.failed(1);
  EXPECT_TRUE(ledger.complete());
  ledger.called(2, Call{1, 0});
  ledger.called(3, Call{1, 0, Records::one, false, true});
  ledger.recorded(2, {10, 20}, "_Z6kernelv");
  ledger.recorded(3, {30, 40}, "marker");
  ledger.drop_run(1);
  const kscope::cupti::RunTrace trace = ledger.take();
  EXPECT_TRUE(trace.activities.empty());
  EXPECT_TRUE(trace.returned_at.empty());
  EXPECT_EQ(trace.unrecorded, 0u);
}

}  // namespace

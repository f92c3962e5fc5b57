// Launch patterns without a GPU: the engine's stream order (core/engine/stream_join.hpp) and its probe of
// a region's first work (core/engine/first_work.hpp) call by call against a recording fake, then whole
// sweeps on the simulated backend's streams (non-blocking, blocking, per-thread default, another
// thread), whose L2 flush slows a kernel it overlaps; regions timed as the events backend times
// them, flagged where the GPU waited for the host before their first work; kernels of one region
// running at the same time, reported; and runs flagged where another process ran kernels on the GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "core/engine/call_order.hpp"
#include "core/engine/first_work.hpp"
#include "core/engine/stream_join.hpp"
#include "kscope/annotation.hpp"
#include "kscope/detail/log_sink.hpp"
#include "kscope/profile.hpp"
#include "kscope/testing.hpp"
#include "test_support.hpp"

using namespace kscope;
using kscope::detail::CallOrder;
using kscope::detail::FirstWork;
using kscope::detail::StreamJoin;
using kscope::detail::StreamOps;
using kscope::testing::SimulatedBackend;
using kscope::testing::StreamKind;

namespace {

// Streams 1..9 are blocking, 10 and up non-blocking; every call is written down as text.
class RecordingOps final : public StreamOps {
 public:
  bool follows_legacy(Stream s) override {
    ++asked[s];
    return s < 10;
  }
  bool capturing(Stream s) override { return std::find(captured.begin(), captured.end(), s) != captured.end(); }
  Event make_event() override {
    ++made;
    return 100 + made;
  }
  void destroy_event(Event) noexcept override { ++destroyed; }
  void record(Event e, Stream s) override { log.push_back("record " + std::to_string(e) + " on " + std::to_string(s)); }
  void wait(Stream s, Event e) override { log.push_back(std::to_string(s) + " waits " + std::to_string(e)); }
  bool completed(Event e) override { return std::find(done.begin(), done.end(), e) != done.end(); }

  std::vector<std::string> take() { return std::exchange(log, {}); }

  std::vector<std::string> log;
  std::map<Stream, int> asked;
  std::vector<Stream> captured;
  std::vector<Event> done;  // events the GPU has reached
  int made = 0, destroyed = 0;
};

using Log = std::vector<std::string>;

TEST(StreamJoin, AStreamThatDoesNotFollowTheLegacyOneWaitsForTheGateOncePerGate) {
  RecordingOps ops;
  {
    StreamJoin join(ops);
    join.before_call(10);  // no gate yet: nothing to wait for
    EXPECT_EQ(ops.take(), Log{});
    join.gate(7);
    join.before_call(10);
    join.before_call(10);
    join.before_call(11);
    EXPECT_EQ(ops.take(), (Log{"10 waits 7", "11 waits 7"}));
    join.gate(8);  // the next flush
    join.before_call(10);
    EXPECT_EQ(ops.take(), Log{"10 waits 8"});
    join.ungate();
    join.before_call(12);
    EXPECT_EQ(ops.take(), Log{});
    EXPECT_EQ(ops.asked[10], 1) << "a stream's flags are asked once";
    EXPECT_EQ(join.unordered_streams_seen(), 3u);
  }
  EXPECT_EQ(ops.destroyed, ops.made) << "every event made is destroyed with the join";
}

TEST(StreamJoin, AGateAfterTheLegacyStreamCostsNothingUntilAStreamThatDoesNotFollowItIsCalled) {
  RecordingOps ops;
  {
    StreamJoin join(ops);
    join.gate_after_legacy();  // the flush of a program on the default streams only
    join.before_call(1);       // a blocking stream
    join.join();
    join.gate_after_legacy();
    EXPECT_EQ(ops.take(), Log{}) << "no event recorded, waited for or joined";
    EXPECT_EQ(ops.made, 0);
    join.before_call(10);  // the first non-blocking stream: the flush's end is recorded now, once
    join.before_call(11);
    EXPECT_EQ(ops.take(), (Log{"record 102 on 0", "10 waits 102", "11 waits 102"}));
    join.join();
    ops.take();
    join.gate_after_legacy();  // from now on recorded right after the flush
    EXPECT_EQ(ops.take(), Log{"record 102 on 0"});
    join.before_call(10);
    EXPECT_EQ(ops.take(), Log{"10 waits 102"});
  }
  EXPECT_EQ(ops.destroyed, ops.made);
}

// ---- CallOrder: which of a call's work the caller's stream (0, legacy) was ordered after ----------------
// Streams 1..9 block (follow the legacy stream), 10 and up do not; ids are the work's numbers.

using Ids = std::vector<CallOrder::Id>;

class CallOrderTest : public ::testing::Test {
 protected:
  RecordingOps ops;
  CallOrder order{ops};
};

TEST_F(CallOrderTest, WorkOnAStreamTheCallersStreamNeverWaitsForIsUnjoinedHoweverLongAgoItEnded) {
  order.enqueued(10, 1);  // before the call: not the call's
  order.begin_call();
  order.recorded(500, 0);
  order.waited(10, 500);  // the side stream waits for the caller's (wait_stream), not the other way
  order.enqueued(10, 2);
  order.enqueued(0, 3);  // the caller's own stream: joined by definition
  order.enqueued(10, 4);
  EXPECT_EQ(order.unjoined(0), (Ids{2, 4}));
  EXPECT_EQ(order.unjoined(0), Ids{}) << "the call's work ends at its return";
}

TEST_F(CallOrderTest, AWaitJoinsTheWorkBeforeItsEventsRecordDirectlyOrThroughAnotherStream) {
  order.begin_call();
  order.enqueued(10, 1);
  order.recorded(500, 10);
  order.enqueued(10, 2);  // after the record: the waits do not cover it
  order.waited(11, 500);
  order.enqueued(11, 3);
  order.recorded(501, 11);
  order.waited(0, 501);  // 0 waits for 11, which waited for 10's first
  EXPECT_EQ(order.unjoined(0), (Ids{2}));
}

TEST_F(CallOrderTest, TheHostsWaitsJoinWhatTheyWaitedFor) {
  order.begin_call();
  order.enqueued(10, 1);
  order.enqueued(11, 2);
  order.recorded(500, 11);
  order.enqueued(12, 3);
  order.host_waited(10);        // stream synchronize
  order.host_waited_for(500);   // event synchronize, or a query that found it done
  EXPECT_EQ(order.unjoined(0), (Ids{3}));
  order.begin_call();
  order.enqueued(12, 4);
  order.host_waited_all();  // context synchronize
  EXPECT_EQ(order.unjoined(0), Ids{});
}

TEST_F(CallOrderTest, BlockingStreamsAreJoinedToTheLegacyStreamButNotToAnotherStream) {
  order.begin_call();
  order.enqueued(3, 1);
  order.enqueued(CallOrder::per_thread_stream(), 2);  // each thread's default stream blocks too
  EXPECT_EQ(order.unjoined(0), Ids{});
  order.begin_call();
  order.enqueued(3, 3);
  EXPECT_EQ(order.unjoined(12), (Ids{3})) << "a non-blocking caller's stream waits for no blocking one";
  order.begin_call();
  order.enqueued(0, 4);
  order.enqueued(4, 5);
  EXPECT_EQ(order.unjoined(5), (Ids{5})) << "blocking stream 5 waits for the legacy stream's work, not for 4's";
}

TEST_F(CallOrderTest, AnEventRecordedBeforeTheSessionOrdersNothingAndAResetForgetsAll) {
  order.begin_call();
  order.enqueued(10, 1);
  order.waited(0, 999);  // never recorded since: unknown
  EXPECT_EQ(order.unjoined(0), (Ids{1}));
  order.recorded(500, 10);
  order.reset();
  order.begin_call();
  order.enqueued(10, 2);
  order.waited(0, 500);
  EXPECT_EQ(order.unjoined(0), (Ids{2}));
}

TEST(FirstWork, TheRegionsFirstCallRecordsTheProbeOnItsStreamAndSaysWhetherTheGpuWasThere) {
  RecordingOps ops;
  FirstWork first(ops);
  first.before_call(10, "cuLaunchKernel");  // before any region: nobody's business
  EXPECT_EQ(ops.take(), Log{});
  EXPECT_FALSE(first.disarm());
  first.arm(7, 8);
  first.before_call(0, "cuLaunchKernel");  // enqueued while the GPU has not reached the start event
  first.before_call(10, "cuMemcpyAsync");  // not the first: nothing
  EXPECT_EQ(ops.take(), Log{"record 8 on 0"});
  auto seen = first.disarm();
  ASSERT_TRUE(seen);
  EXPECT_FALSE(seen->gpu_waited);
  EXPECT_EQ(seen->call, "cuLaunchKernel on the default stream");
  EXPECT_FALSE(first.disarm()) << "read once";

  first.arm(7, 8);
  ops.done = {7};  // the GPU reached the start event before the host enqueued the region's first work
  ops.captured = {11};
  first.before_call(11, "cuLaunchKernel");  // captured into a graph: runs nothing now
  std::thread([&] { first.before_call(12, "cuGraphLaunch"); }).join();
  first.before_call(1, "cuLaunchKernel");
  EXPECT_EQ(ops.take(), Log{"record 8 on 12"});
  seen = first.disarm();
  ASSERT_TRUE(seen);
  EXPECT_TRUE(seen->gpu_waited);
  EXPECT_EQ(seen->call, "cuGraphLaunch on a non-blocking stream, from another thread");

  first.arm(7, 8);
  first.before_call(1, "cuLaunchKernelEx");
  EXPECT_EQ(ops.take(), Log{"record 8 on 1"});
  EXPECT_EQ(first.disarm()->call, "cuLaunchKernelEx on a blocking stream");
  first.arm(7, 8);
  EXPECT_FALSE(first.disarm()) << "a region that made no call";
  first.before_call(10, "cuLaunchKernel");  // after the region closed
  EXPECT_EQ(ops.take(), Log{});
}

TEST(StreamJoin, BlockingStreamsAreLeftToTheLegacyStreamsOwnOrder) {
  RecordingOps ops;
  StreamJoin join(ops);
  join.gate(7);
  join.before_call(1);
  join.before_call(2);
  join.join();
  EXPECT_EQ(ops.take(), Log{});
  EXPECT_EQ(ops.made, 0);
  EXPECT_EQ(join.unordered_streams_seen(), 0u);
}

TEST(StreamJoin, JoinMakesTheLegacyStreamWaitForEachStreamCalledSinceTheLastJoin) {
  RecordingOps ops;
  StreamJoin join(ops);
  join.before_call(10);
  join.before_call(11);
  join.before_call(10);
  join.join();
  Log joined = ops.take();
  std::sort(joined.begin(), joined.end());
  EXPECT_EQ(joined, (Log{"0 waits 101", "0 waits 102", "record 101 on 10", "record 102 on 11"}));
  join.join();  // nothing called since
  EXPECT_EQ(ops.take(), Log{});
  join.before_call(11);
  join.join();
  EXPECT_EQ(ops.take(), (Log{"record 102 on 11", "0 waits 102"})) << "each stream keeps its event";
  EXPECT_EQ(ops.made, 2);
}

TEST(StreamJoin, ACapturedStreamIsLeftAlone) {
  RecordingOps ops;
  StreamJoin join(ops);
  join.gate(7);
  ops.captured = {10};
  join.before_call(10);  // captured into a graph: runs nothing now
  join.join();
  EXPECT_EQ(ops.take(), Log{});
  ops.captured.clear();  // the capture ended: the stream runs its calls again
  join.before_call(10);
  EXPECT_EQ(ops.take(), Log{"10 waits 7"});
  ops.captured = {10};  // a capture began after the call: the join leaves the stream alone
  join.join();
  EXPECT_EQ(ops.take(), Log{});
}

TEST(StreamJoin, AStreamDestroyedBeforeTheJoinIsRecordedAsItGoesAndItsHandleAskedAfresh) {
  RecordingOps ops;
  StreamJoin join(ops);
  join.before_call(10);
  join.stream_destroyed(10);
  EXPECT_EQ(ops.take(), Log{"record 101 on 10"});
  join.join();
  EXPECT_EQ(ops.take(), Log{"0 waits 101"});
  join.before_call(10);  // a new stream with the old handle
  EXPECT_EQ(ops.asked[10], 2);
  join.stream_destroyed(10);
  join.stream_destroyed(10);  // destroyed twice (the second call fails in CUDA): nothing more
  join.stream_destroyed(3);   // never called on
  EXPECT_EQ(ops.take(), Log{"record 101 on 10"}) << "the event joined last is reused";
  EXPECT_EQ(ops.made, 1);
}

TEST(StreamJoin, CallsFromManyThreadsWaitOncePerStream) {
  RecordingOps ops;
  StreamJoin join(ops);
  join.gate(7);
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&join, t] {
      for (int i = 0; i < 100; ++i) join.before_call(10 + static_cast<StreamOps::Stream>((t + i) % 4));
    });
  for (auto& t : threads) t.join();
  Log waits = ops.take();
  std::sort(waits.begin(), waits.end());
  EXPECT_EQ(waits, (Log{"10 waits 7", "11 waits 7", "12 waits 7", "13 waits 7"}));
}

struct Warnings : detail::LogSink {
  std::vector<std::string> seen;
  void warning(detail::WarningKind, const std::string& message) override { seen.push_back(message); }
  void line(detail::LogLevel, const std::string&) override {}
  void write(const std::string&) override {}
  bool is_terminal() override { return false; }
};

struct InstalledWarnings {
  InstalledWarnings() { detail::set_log_sink(sink); }
  ~InstalledWarnings() { detail::set_log_sink(nullptr); }
  std::shared_ptr<Warnings> sink = std::make_shared<Warnings>();
};

Settings cold(std::size_t runs = 5) {
  Settings s = kscope_test::quiet(runs);
  s.cache_control = CacheControl::all;
  return s;
}

double median_of(const Results& r, const std::string& annotation) {
  return r.at(annotation, "test__kernel_duration", 0).stats.median;
}

// One 10 us kernel per region launched as `launch` says, the L2 flush (20 us) before the region: a
// kernel that overlapped it would read longer by the overlap.
double measured(SimulatedBackend& sim, const std::function<void()>& launch) {
  const Results r = profile_with_backend(Sweep(), cold(), [&](const Config&) {
    Annotation a("k");
    launch();
  }, sim);
  return median_of(r, "k");
}

TEST(LaunchPatterns, EveryStreamAndThreadMeasuresAsTheDefaultStream) {
  SimulatedBackend sim;
  constexpr double kNs = 10'000;
  sim.make_stream(21, StreamKind::blocking);
  const double plain = measured(sim, [&] { sim.launch("k", kNs); });
  EXPECT_DOUBLE_EQ(plain, kNs);
  EXPECT_DOUBLE_EQ(measured(sim, [&] { sim.launch("k", kNs, 0, 20); }), plain) << "a non-blocking stream";
  EXPECT_DOUBLE_EQ(measured(sim, [&] { sim.launch("k", kNs, 0, 21); }), plain) << "a blocking stream";
  EXPECT_DOUBLE_EQ(measured(sim, [&] { sim.launch("k", kNs, 0, SimulatedBackend::kPerThreadStream); }), plain)
      << "the per-thread default stream";
  EXPECT_DOUBLE_EQ(measured(sim, [&] { std::thread([&] { sim.launch("k", kNs, 0, 20); }).join(); }), plain)
      << "a non-blocking stream from another thread";
  EXPECT_DOUBLE_EQ(
      measured(sim, [&] { std::thread([&] { sim.launch("k", kNs, 0, SimulatedBackend::kPerThreadStream); }).join(); }),
      plain)
      << "another thread's per-thread default stream";
}

// The region before the flush left a kernel running on a side stream: the flush waits for it
// rather than slow it down.
TEST(LaunchPatterns, TheFlushWaitsForTheSideStreamsEarlierWork) {
  SimulatedBackend sim;
  const Results r = profile_with_backend(Sweep(), cold(), [&](const Config&) {
    {
      Annotation a("side");
      sim.launch("side", 50'000, 0, 20);  // still running when the next region's flush is enqueued
    }
    Annotation b("default");
    sim.launch("default", 10'000);
  }, sim);
  EXPECT_DOUBLE_EQ(median_of(r, "side"), 50'000);
  EXPECT_DOUBLE_EQ(median_of(r, "default"), 10'000);
}

TEST(LaunchPatterns, KernelsRunningAtTheSameTimeAreBothMeasuredAndTheirOverlapReported) {
  SimulatedBackend sim;
  auto body = [&](const Config&) {
    Annotation a("pair");
    sim.launch("first", 30'000, 0, 20);
    sim.launch("second", 10'000, 0, 21);  // starts with the first: 10 us of overlap
  };
  Settings s = cold(4);
  s.combine_kernel_metrics = [](double a, double b) { return a + b; };
  const Results added = profile_with_backend(Sweep(), s, body, sim);
  const SummaryRow& row = added.at("pair", "test__kernel_duration", 0);
  EXPECT_DOUBLE_EQ(row.stats.median, 40'000) << "both durations, added";
  EXPECT_EQ(row.overlapped_runs, 4u);
  for (const SampleRow& sample : added.samples()) EXPECT_DOUBLE_EQ(sample.overlap_ns, 10'000);

  s.combine_kernel_metrics = nullptr;
  s.replay_mode = ReplayMode::range;
  const Results span = profile_with_backend(Sweep(), s, body, sim);
  EXPECT_DOUBLE_EQ(span.at("pair", "test__kernel_duration", 0).stats.median, 30'000) << "the region's span";
  EXPECT_EQ(span.at("pair", "test__kernel_duration", 0).overlapped_runs, 4u);

  // One after the other on one stream: no overlap, none reported.
  const Results serial = profile_with_backend(Sweep(), s, [&](const Config&) {
    Annotation a("pair");
    sim.launch("first", 30'000, 0, 20);
    sim.launch("second", 10'000, 0, 20);
  }, sim);
  EXPECT_EQ(serial.at("pair", "test__kernel_duration", 0).overlapped_runs, 0u);
  EXPECT_DOUBLE_EQ(serial.samples()[0].overlap_ns, 0);
}

TEST(LaunchPatterns, CombiningKernelsThatOverlappedIsWarnedOfOnce) {
  SimulatedBackend sim;
  InstalledWarnings installed;
  Settings s = cold(3);
  s.combine_kernel_metrics = [](double a, double b) { return a + b; };
  profile_with_backend(Sweep(), s, [&](const Config&) {
    Annotation a("pair");
    sim.launch("first", 30'000, 0, 20);
    sim.launch("second", 10'000, 0, 21);
  }, sim);
  const auto& seen = installed.sink->seen;
  ASSERT_EQ(std::count_if(seen.begin(), seen.end(),
                          [](const std::string& w) { return w.find("ran at the same time") != std::string::npos; }),
            1);
  const std::string& warning =
      *std::find_if(seen.begin(), seen.end(), [](const std::string& w) { return w.find("same time") != std::string::npos; });
  EXPECT_NE(warning.find("'pair'"), std::string::npos) << warning;
  EXPECT_NE(warning.find("10.00 us of overlap"), std::string::npos) << warning;
  EXPECT_NE(warning.find("OverlapNs"), std::string::npos) << warning;
}

// Regions timed as the events backend times them (from the start event on the default stream): a
// launch the host issues late (gap_ns) after the GPU reached the region's start leaves the GPU
// waiting inside the region; that wait is in the value, and the run is flagged with it.
TEST(HostGap, ARegionTimedFromItsStartIsFlaggedWhereTheGpuWaitedForTheHostBeforeItsFirstWork) {
  SimulatedBackend sim;
  sim.set_region_timing(true);
  sim.make_stream(21, StreamKind::blocking);
  InstalledWarnings installed;
  constexpr double kNs = 10'000, kGap = 5'000;
  const auto timed = [&](const std::function<void()>& launch, CacheControl cache = CacheControl::all) {
    Settings s = cold(4);
    s.cache_control = cache;
    return profile_with_backend(Sweep(), s, [&](const Config&) {
      Annotation a("k");
      launch();
    }, sim);
  };
  const auto row = [](const Results& r) { return r.at("k", "test__region_duration", 0); };

  for (const auto& [what, launch] : std::vector<std::pair<std::string, std::function<void()>>>{
           {"the default stream", [&] { sim.launch("k", kNs); }},
           {"a non-blocking stream", [&] { sim.launch("k", kNs, 0, 20); }},
           {"a blocking stream", [&] { sim.launch("k", kNs, 0, 21); }},
           {"another thread", [&] { std::thread([&] { sim.launch("k", kNs, 0, 20); }).join(); }},
           {"a gap between two kernels", [&] { sim.launch("k", kNs / 2); sim.launch("k", kNs / 2, kGap); }},
       }) {
    const Results r = timed(launch);
    EXPECT_DOUBLE_EQ(row(r).stats.median, what == "a gap between two kernels" ? kNs + kGap : kNs) << what;
    EXPECT_EQ(row(r).host_gap_runs, 0u) << what << ": the host was ahead of the GPU at the region's first work";
    for (const SampleRow& sample : r.samples()) EXPECT_DOUBLE_EQ(sample.host_gap_ns, 0) << what;
  }
  EXPECT_TRUE(installed.sink->seen.empty());

  // The first work issued late: on a side stream, from another thread, on the default stream.
  for (const auto& [what, launch] : std::vector<std::pair<std::string, std::function<void()>>>{
           {"SimulatedBackend::launch on a non-blocking stream", [&] { sim.launch("k", kNs, kGap, 20); }},
           {"SimulatedBackend::launch on the default stream, from another thread",
            [&] { std::thread([&] { sim.launch("k", kNs, kGap); }).join(); }},
       }) {
    installed.sink->seen.clear();
    const Results r = timed(launch);
    EXPECT_DOUBLE_EQ(row(r).stats.median, kNs + kGap) << what << ": the wait is in the value";
    EXPECT_EQ(row(r).host_gap_runs, 4u) << what;
    for (const SampleRow& sample : r.samples()) EXPECT_DOUBLE_EQ(sample.host_gap_ns, kGap) << what;
    const auto& seen = installed.sink->seen;
    ASSERT_EQ(seen.size(), 1u) << what << ": one warning per annotation";
    EXPECT_NE(seen[0].find("waited 5.00 us for the host before the first work of annotation 'k' (" + what + ")"),
              std::string::npos) << seen[0];
    EXPECT_NE(seen[0].find("HostGapRuns"), std::string::npos) << seen[0];
    EXPECT_NE(seen[0].find("Backend::cupti times the kernels alone"), std::string::npos) << seen[0];
  }

  // Without a flush ahead of the region nothing hides the host's lateness, on the default stream too.
  const Results none = timed([&] { sim.launch("k", kNs, kGap); }, CacheControl::none);
  EXPECT_EQ(row(none).host_gap_runs, 4u);
  EXPECT_DOUBLE_EQ(row(none).stats.median, kNs + kGap);
}

TEST(OtherProcess, TheRunsOfABatchDuringWhichAnotherProcessRanAreFlagged) {
  SimulatedBackend sim;
  InstalledWarnings installed;
  sim.set_max_batch_runs(2);
  // One reading per batch of 2: [warm-up, run 1], [runs 2, 3], [runs 4, 5], [run 6].
  sim.device().set_other_processes({{}, {4242}, {}});
  Settings s = kscope_test::quiet(6);
  const Results r = profile_with_backend(Sweep(), s, [&](const Config&) {
    Annotation a("k");
    sim.launch("k", 100);
  }, sim);
  std::vector<bool> flagged;
  for (const SampleRow& sample : r.samples()) flagged.push_back(sample.other_process);
  EXPECT_EQ(flagged, (std::vector<bool>{false, true, true, false, false, false}));
  EXPECT_EQ(r.at("k", "test__kernel_duration", 0).other_process_runs, 2u);
  const auto& seen = installed.sink->seen;
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_NE(seen[0].find("pid 4242"), std::string::npos) << seen[0];
  EXPECT_NE(seen[0].find("OtherProcessRuns"), std::string::npos) << seen[0];
}

TEST(OtherProcess, TheFlagsSurviveTheResultsFile) {
  SimulatedBackend sim;
  sim.device().set_other_processes({{7}});
  kscope_test::TempDir dir;
  Settings s = kscope_test::quiet(2);
  s.output_prefix = dir.prefix();
  const Results r = profile_with_backend(Sweep(), s, [&](const Config&) {
    Annotation a("k");
    sim.launch("k", 100);
  }, sim);
  const Results back = load_results(dir.prefix() + "results.json");
  EXPECT_EQ(back.at("k", "test__kernel_duration", 0).other_process_runs, 2u);
  EXPECT_TRUE(back.samples()[0].other_process);
}

TEST(HostGap, TheFlagSurvivesTheResultsFile) {
  SimulatedBackend sim;
  sim.set_region_timing(true);
  kscope_test::TempDir dir;
  Settings s = kscope_test::quiet(2);
  s.output_prefix = dir.prefix();
  profile_with_backend(Sweep(), s, [&](const Config&) {
    Annotation a("k");
    sim.launch("k", 100, 7, 20);
  }, sim);
  const Results back = load_results(dir.prefix() + "results.json");
  EXPECT_EQ(back.at("k", "test__region_duration", 0).host_gap_runs, 2u);
  EXPECT_DOUBLE_EQ(back.samples()[0].host_gap_ns, 7);
  EXPECT_DOUBLE_EQ(back.samples()[0].value, 107);
}

}  // namespace

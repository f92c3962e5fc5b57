// A kernel measures the same however and wherever it is launched: each launch pattern (a
// non-blocking, a blocking and the per-thread default stream, another thread, a CUDA graph on a side
// stream captured in global and in thread-local mode, programmatic dependent launch, a cluster and a
// cooperative launch, cuBLAS on a user stream) against the same kernel launched plainly on the
// default stream, by every backend that measures durations (cupti, events) and by the counters
// backend; evaluate() finds nothing in any of them; two kernels running at the same time in one
// region are both measured and their overlap reported; and another process running kernels on the
// GPU meanwhile is flagged on the runs it touched.
//
// The kernel is c = a + b over 2^24 floats (192 MiB moved: 58-62 us cold on an H100), memory-bound,
// so a kernel running beside kscope's L2 flush reads slower (11% on an H100 before the flush was
// ordered with side streams) and one whose L2 was not flushed reads faster. Medians of 30 cold runs
// within 2% of the plain launch's: the H100's run-to-run spread for it is well under 1%. The events
// backend's region holds the events' own waits (a stream waiting for an event, microseconds), so
// it measures a kernel of 2^27 floats (about 0.5 ms), where those stay under 1%. Its value also
// holds any wait of the GPU for the host before the region's first work (a thread starting), which
// it flags per run with its size (host_gap_ns): the value less that wait must be the plain launch's.
#include <gtest/gtest.h>

#include <cuda_runtime_api.h>
#if KSCOPE_TEST_CUBLAS
#include <cublas_v2.h>
#endif
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "gpu_test_support.hpp"
#include "kscope/kscope.hpp"
#include "spin_bounds.hpp"

extern char** environ;

namespace {

using kscope::Annotation;
using kscope::Config;
using kscope_test::check;

constexpr std::size_t kFloats = std::size_t(1) << 24;
constexpr std::size_t kEventsFloats = std::size_t(1) << 27;
constexpr int kBlock = 256;
constexpr int kRuns = 30;
constexpr double kDurationPct = 2, kCounterPct = 1;

// Grid-stride, so that every launch uses one grid: the most blocks that are resident at once, which
// a cooperative launch needs (and an even count, which a cluster of 2 needs).
__global__ void add_kernel(const float* a, const float* b, float* c, std::size_t n) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n; i += std::size_t(gridDim.x) * blockDim.x)
    c[i] = a[i] + b[i];
}
constexpr const char* kAddKernel = "add_kernel";

unsigned resident_grid() {
  int device = 0, sms = 0, per_sm = 0;
  check(cudaGetDevice(&device), "cudaGetDevice");
  check(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device), "cudaDeviceGetAttribute");
  check(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, add_kernel, kBlock, 0), "cudaOccupancy");
  return static_cast<unsigned>(sms * per_sm) & ~1u;
}

// One add: c = a + b over n floats, with the grid every launch uses.
struct AddArgs {
  const float* a;
  const float* b;
  float* c;
  std::size_t n;
  unsigned grid;
};

// The add's operands in memory of their own: a and b hold 1.0f.
struct Add {
  explicit Add(std::size_t n) : a(n), b(n), c(n), n(n) {}
  AddArgs args() const { return {a.get(), b.get(), c.get(), n, resident_grid()}; }
  kscope_test::DeviceFloats a, b, c;
  std::size_t n;
};

void launch_add(const AddArgs& add, cudaStream_t stream) {
  add_kernel<<<add.grid, kBlock, 0, stream>>>(add.a, add.b, add.c, add.n);
  check(cudaGetLastError(), "add_kernel");
}

// cudaLaunchKernelEx with one attribute.
void launch_add_ex(const AddArgs& add, cudaStream_t stream, const cudaLaunchAttribute& attribute) {
  cudaLaunchConfig_t config{};
  config.gridDim = dim3(add.grid);
  config.blockDim = dim3(kBlock);
  config.stream = stream;
  cudaLaunchAttribute attributes[] = {attribute};
  config.attrs = attributes;
  config.numAttrs = 1;
  check(cudaLaunchKernelEx(&config, add_kernel, add.a, add.b, add.c, add.n), "cudaLaunchKernelEx");
}

class Stream {
 public:
  explicit Stream(unsigned flags) { check(cudaStreamCreateWithFlags(&stream_, flags), "cudaStreamCreateWithFlags"); }
  ~Stream() { cudaStreamDestroy(stream_); }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  cudaStream_t get() const { return stream_; }

 private:
  cudaStream_t stream_ = nullptr;
};

class GraphExec {
 public:
  // The add captured on `stream` in `mode`.
  GraphExec(const AddArgs& add, cudaStream_t stream, cudaStreamCaptureMode mode) {
    cudaGraph_t graph = nullptr;
    check(cudaStreamBeginCapture(stream, mode), "cudaStreamBeginCapture");
    launch_add(add, stream);
    check(cudaStreamEndCapture(stream, &graph), "cudaStreamEndCapture");
    const cudaError_t made = cudaGraphInstantiate(&exec_, graph, 0);
    cudaGraphDestroy(graph);
    check(made, "cudaGraphInstantiate");
  }
  ~GraphExec() { cudaGraphExecDestroy(exec_); }
  GraphExec(const GraphExec&) = delete;
  GraphExec& operator=(const GraphExec&) = delete;
  void launch(cudaStream_t stream) const { check(cudaGraphLaunch(exec_, stream), "cudaGraphLaunch"); }

 private:
  cudaGraphExec_t exec_ = nullptr;
};

// A launch pattern of the add: prepare() runs in the body before the region (a graph is captured
// there, in the session, on its first call), launch() inside it; side() is the stream it leaves
// work on that the default stream does not wait for (nullptr: none), which evaluate's candidate joins.
struct Pattern {
  std::string name;
  std::function<void(const AddArgs&)> prepare;
  std::function<void(const AddArgs&)> launch;
  cudaStream_t side = nullptr;
  bool graph = false;  // its kernel is a graph's: the counters backend replays it in range mode only
};

class Patterns {
 public:
  std::vector<Pattern> all() {
    const auto none = [](const AddArgs&) {};
    cudaLaunchAttribute pdl{};
    pdl.id = cudaLaunchAttributeProgrammaticStreamSerialization;
    pdl.val.programmaticStreamSerializationAllowed = 1;
    cudaLaunchAttribute cluster{};
    cluster.id = cudaLaunchAttributeClusterDimension;
    cluster.val.clusterDim.x = 2;
    cluster.val.clusterDim.y = 1;
    cluster.val.clusterDim.z = 1;
    return {
        {"non-blocking stream", none, [this](const AddArgs& a) { launch_add(a, side_.get()); }, side_.get()},
        {"blocking stream", none, [this](const AddArgs& a) { launch_add(a, blocking_.get()); }},
        {"per-thread default stream", none, [](const AddArgs& a) { launch_add(a, cudaStreamPerThread); }},
        {"another thread", none, [](const AddArgs& a) { std::thread([&] { launch_add(a, cudaStreamLegacy); }).join(); }},
        {"another thread, non-blocking stream", none,
         [this](const AddArgs& a) { std::thread([&] { launch_add(a, side_.get()); }).join(); }, side_.get()},
        {"graph on a side stream, captured global", [this](const AddArgs& a) { graph(a, cudaStreamCaptureModeGlobal); },
         [this](const AddArgs& a) { graphs_.at({a.c, cudaStreamCaptureModeGlobal})->launch(side_.get()); },
         side_.get(), true},
        {"graph on a side stream, captured thread-local",
         [this](const AddArgs& a) { graph(a, cudaStreamCaptureModeThreadLocal); },
         [this](const AddArgs& a) { graphs_.at({a.c, cudaStreamCaptureModeThreadLocal})->launch(side_.get()); },
         side_.get(), true},
        {"programmatic dependent launch", none, [pdl](const AddArgs& a) { launch_add_ex(a, cudaStreamLegacy, pdl); }},
        {"programmatic dependent launch, non-blocking stream", none,
         [this, pdl](const AddArgs& a) { launch_add_ex(a, side_.get(), pdl); }, side_.get()},
        {"cluster launch", none, [cluster](const AddArgs& a) { launch_add_ex(a, cudaStreamLegacy, cluster); }},
        {"cooperative launch", none,
         [](const AddArgs& a) {
           const float* in_a = a.a;
           const float* in_b = a.b;
           float* out = a.c;
           std::size_t n = a.n;
           void* args[] = {&in_a, &in_b, &out, &n};
           check(cudaLaunchCooperativeKernel(reinterpret_cast<const void*>(&add_kernel), dim3(a.grid), dim3(kBlock),
                                             args, 0, cudaStreamLegacy),
                 "cudaLaunchCooperativeKernel");
         }},
    };
  }

 private:
  void graph(const AddArgs& a, cudaStreamCaptureMode mode) {
    auto& exec = graphs_[{a.c, mode}];
    if (!exec) exec = std::make_unique<GraphExec>(a, side_.get(), mode);
  }
  Stream side_{cudaStreamNonBlocking}, blocking_{cudaStreamDefault};
  std::map<std::pair<float*, int>, std::unique_ptr<GraphExec>> graphs_;
};

kscope::Settings settings(kscope::Backend backend) {
  kscope::Settings s;
  s.backend = backend;
  s.cache_control = kscope::CacheControl::all;
  s.runs = kRuns;
  s.verbosity = kscope::Verbosity::quiet;
  return s;
}

kscope::Results measure(const kscope::Settings& s, const AddArgs& add, const std::function<void(const AddArgs&)>& prepare,
                        const std::function<void(const AddArgs&)>& launch) {
  return kscope::profile(kscope::Sweep(), s, [&](const Config&) {
    prepare(add);
    Annotation region("add");
    launch(add);
  });
}

double percent_apart(double value, double reference) { return 100 * (value - reference) / reference; }

::testing::AssertionResult within(double value, double reference, double pct, const std::string& what) {
  const double apart = percent_apart(value, reference);
  std::printf("[result] %s: %.4g against %.4g plainly (%+.2f%%)\n", what.c_str(), value, reference, apart);
  if (std::abs(apart) <= pct) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << what << ": " << value << " against " << reference << " launched plainly ("
                                       << apart << "%, more than " << pct << "%)";
}

double median(const kscope::Results& r, const std::string& metric) { return r.at("add", metric, 0).stats.median; }

// The median of each run's value less the GPU's flagged wait for the host before the region's first
// work (events; the value itself where the backend times kernels, whose host_gap_ns is NaN).
double median_less_host_gap(const kscope::Results& r, const std::string& metric) {
  std::vector<double> work;
  for (const kscope::SampleRow& s : r.samples())
    if (s.metric == metric) work.push_back(s.value - (std::isnan(s.host_gap_ns) ? 0.0 : s.host_gap_ns));
  std::sort(work.begin(), work.end());
  if (work.empty()) return NAN;
  const std::size_t n = work.size();
  return n % 2 ? work[n / 2] : (work[n / 2 - 1] + work[n / 2]) / 2;
}

void durations_match(kscope::Backend backend, std::size_t floats) {
  KSCOPE_REQUIRE_GPU();
  const Add operands(floats);
  const AddArgs add = operands.args();
  Patterns patterns;
  const kscope::Settings s = settings(backend);
  const auto none = [](const AddArgs&) {};
  const std::string metric = kscope::to_string(backend) == "cupti" ? "cupti__kernel_duration" : "events__region_duration";
  const double plain =
      median_less_host_gap(measure(s, add, none, [](const AddArgs& a) { launch_add(a, cudaStreamLegacy); }), metric);
  const bool events = backend == kscope::Backend::events;
  for (const Pattern& p : patterns.all()) {
    const kscope::Results r = measure(s, add, p.prepare, p.launch);
    const kscope::SummaryRow& row = r.at("add", metric, 0);
    if (events) {
      double gaps = 0;
      for (const kscope::SampleRow& sample : r.samples()) {
        EXPECT_FALSE(std::isnan(sample.host_gap_ns)) << p.name << ": the events backend did not tell whether the GPU "
                                                        "waited for the host";
        gaps += sample.host_gap_ns;
      }
      std::printf("[result] events, %s: %zu of %zu runs flagged host_gap, mean gap %.1f us, median value %.4g\n",
                  p.name.c_str(), row.host_gap_runs, row.stats.count, gaps / static_cast<double>(r.samples().size()) / 1e3,
                  row.stats.median);
    } else {
      EXPECT_EQ(row.host_gap_runs, 0u) << p.name << ": cupti times the kernels alone";
    }
    const ::testing::AssertionResult close = within(median_less_host_gap(r, metric), plain, kDurationPct,
                                                    kscope::to_string(backend) + ", " + p.name +
                                                        (events ? " less the host gap" : ""));
    // A region whose every run is flagged tells the user its value holds host time: a thread that
    // takes over can also make the GPU wait after the first work, which no first-work probe sees
    // (+1.2% to +2.1% on an H100 with another thread).
    const bool flagged_throughout = events && row.host_gap_runs == row.stats.count;
    EXPECT_TRUE(close || flagged_throughout) << close.message();
    if (backend == kscope::Backend::cupti) {
      EXPECT_NE(r.at("add", metric, 0).kernel.find(kAddKernel), std::string::npos) << p.name;
      EXPECT_EQ(r.at("add", metric, 0).overlapped_runs, 0u) << p.name;
    }
  }
}

TEST(LaunchPatterns, CuptiMeasuresEveryPatternAsThePlainLaunch) { durations_match(kscope::Backend::cupti, kFloats); }

TEST(LaunchPatterns, EventsMeasureEveryPatternAsThePlainLaunch) { durations_match(kscope::Backend::events, kEventsFloats); }

// Bytes moved from and to DRAM after a cold L2: 2 x 64 MiB read, 64 MiB written, whatever the launch.
TEST(LaunchPatterns, CountersMeasureEveryPatternAsThePlainLaunch) {
  KSCOPE_REQUIRE_GPU();
  const Add operands(kFloats);
  const AddArgs add = operands.args();
  Patterns patterns;
  kscope::Settings s = settings(kscope::Backend::counters);
  s.metrics = {"dram__bytes_read.sum", "dram__bytes_write.sum"};
  const auto none = [](const AddArgs&) {};
  const auto plain_in = [&](const kscope::Settings& with) {
    return measure(with, add, none, [](const AddArgs& a) { launch_add(a, cudaStreamLegacy); });
  };
  kscope::Settings range = s;
  range.replay_mode = kscope::ReplayMode::range;
  const kscope::Results plain = plain_in(s), plain_range = plain_in(range);
  for (const Pattern& p : patterns.all()) {
    if (p.graph) {
      // Kernel replay cannot take a graph's kernels one by one: refused by name; range replay measures it.
      try {
        measure(s, add, p.prepare, p.launch);
        ADD_FAILURE() << p.name << ": kernel replay measured a graph's kernel";
      } catch (const kscope::SweepError& e) {
        EXPECT_NE(std::string(e.what()).find("CUDA graph"), std::string::npos) << e.what();
      }
    }
    const kscope::Settings& with = p.graph ? range : s;
    const kscope::Results r = measure(with, add, p.prepare, p.launch);
    for (const std::string metric : {"dram__bytes_read.sum", "dram__bytes_write.sum"})
      EXPECT_TRUE(within(median(r, metric), median(p.graph ? plain_range : plain, metric), kCounterPct,
                         "counters " + metric + ", " + p.name + (p.graph ? " (range replay)" : "")));
  }
}

// A correct program of each pattern against the plain launch, as evaluate() runs them: fresh inputs
// every run (x), a fresh output (2x), the side stream joined back to the caller's; a graph reads and
// writes the buffers it was captured with, so its program copies the input in and the output out.
// No finding, and no verdict that says the timing cannot be trusted.
__global__ void fill_kernel(float* out, std::size_t n, float value) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n; i += std::size_t(gridDim.x) * blockDim.x)
    out[i] = value;
}

std::shared_ptr<float> device_floats(std::size_t n) {
  float* p = nullptr;
  check(cudaMalloc(&p, n * sizeof(float)), "cudaMalloc");
  return std::shared_ptr<float>(p, [](float* q) { cudaFree(q); });
}

kscope::Tensors tensors_of(std::shared_ptr<float> data, std::size_t n) {
  kscope::TensorView v{data.get(), {static_cast<std::int64_t>(n)}, kscope::DType::f32, kscope::MemorySpace::device};
  return kscope::Tensors{{v}, std::move(data)};
}

TEST(LaunchPatterns, EvaluateFindsNothingInAnyPattern) {
  KSCOPE_REQUIRE_GPU();
  const Add staging(kFloats);  // a graph's buffers
  const unsigned grid = staging.args().grid;
  Patterns patterns;
  kscope_test::Event joined;
  kscope::Sweep sweep = kscope::Sweep().axis("n", {static_cast<std::int64_t>(kFloats)});
  kscope::Settings s;
  s.runs = 10;
  s.verbosity = kscope::Verbosity::quiet;
  const std::size_t bytes = kFloats * sizeof(float);
  for (const Pattern& p : patterns.all()) {
    kscope::Contest contest;
    contest.inputs = [&](const Config&, std::uint64_t seed) {
      auto x = device_floats(kFloats);
      fill_kernel<<<grid, kBlock>>>(x.get(), kFloats, static_cast<float>(seed % 1000) / 8);
      check(cudaDeviceSynchronize(), "cudaDeviceSynchronize(inputs)");
      return tensors_of(std::move(x), kFloats);
    };
    const auto input = [](const kscope::Tensors& in) { return static_cast<const float*>(in.views.at(0).data); };
    contest.reference = [&](const kscope::Tensors& in) {
      auto out = device_floats(kFloats);
      launch_add({input(in), input(in), out.get(), kFloats, grid}, cudaStreamLegacy);
      return tensors_of(std::move(out), kFloats);
    };
    contest.candidate = [&](const kscope::Tensors& in) {
      auto out = device_floats(kFloats);
      cudaStream_t stream = p.side ? p.side : cudaStreamLegacy;
      if (p.graph) {
        const AddArgs fixed{staging.a.get(), staging.a.get(), staging.c.get(), kFloats, grid};
        check(cudaMemcpyAsync(staging.a.get(), input(in), bytes, cudaMemcpyDeviceToDevice, stream), "cudaMemcpyAsync");
        p.prepare(fixed);
        p.launch(fixed);
        check(cudaMemcpyAsync(out.get(), staging.c.get(), bytes, cudaMemcpyDeviceToDevice, stream), "cudaMemcpyAsync");
      } else {
        const AddArgs fresh{input(in), input(in), out.get(), kFloats, grid};
        p.prepare(fresh);
        p.launch(fresh);
      }
      if (p.side) {
        check(cudaEventRecord(joined.get(), p.side), "cudaEventRecord");
        check(cudaStreamWaitEvent(cudaStreamLegacy, joined.get(), 0), "cudaStreamWaitEvent");
      }
      return tensors_of(std::move(out), kFloats);
    };
    const kscope::Evaluation e = kscope::evaluate(sweep, s, contest);
    const kscope::EvaluationRow& row = e.rows().at(0);
    std::printf("[result] evaluate, %s: %s, speedup %.3f, findings %zu\n", p.name.c_str(),
                to_string(row.verdict).c_str(), row.speedup, row.findings.size());
    EXPECT_TRUE(row.findings.empty()) << p.name << ":\n" << e;
    EXPECT_TRUE(row.correct) << p.name << ": " << row.mismatch;
    EXPECT_NE(row.verdict, kscope::EvaluationVerdict::suspect) << p.name;
  }
}

#if KSCOPE_TEST_CUBLAS
// cuBLAS's SGEMM (n = 2048, about 0.3 ms on an H100) on a user's non-blocking stream, against the
// same call on the default stream: the same kernels, the same time and bytes.
TEST(LaunchPatterns, CublasOnAUserStreamMeasuresAsOnTheDefaultStream) {
  KSCOPE_REQUIRE_GPU();
  constexpr int n = 2048;
  kscope_test::DeviceFloats a(std::size_t(n) * n), b(std::size_t(n) * n), c(std::size_t(n) * n);
  cublasHandle_t handle = nullptr;
  ASSERT_EQ(cublasCreate(&handle), CUBLAS_STATUS_SUCCESS);
  Stream user(cudaStreamNonBlocking);
  const auto gemm = [&](cudaStream_t stream) {
    const float one = 1, zero = 0;
    ASSERT_EQ(cublasSetStream(handle, stream), CUBLAS_STATUS_SUCCESS);
    ASSERT_EQ(cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, a.get(), n, b.get(), n, &zero, c.get(), n),
              CUBLAS_STATUS_SUCCESS);
  };
  gemm(cudaStreamLegacy);  // cuBLAS's first call loads its kernels
  check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  const auto on = [&](kscope::Settings s, cudaStream_t stream) {
    s.combine_kernel_metrics = [](double x, double y) { return x + y; };  // a GEMM may take more than one kernel
    return kscope::profile(kscope::Sweep(), s, [&](const Config&) {
      Annotation region("add");
      gemm(stream);
    });
  };
  for (kscope::Backend backend : {kscope::Backend::cupti, kscope::Backend::events}) {
    const std::string metric = backend == kscope::Backend::cupti ? "cupti__kernel_duration" : "events__region_duration";
    EXPECT_TRUE(within(median(on(settings(backend), user.get()), metric),
                       median(on(settings(backend), cudaStreamLegacy), metric), kDurationPct,
                       kscope::to_string(backend) + ", cuBLAS SGEMM on a user stream"));
  }
  kscope::Settings counters = settings(kscope::Backend::counters);
  counters.metrics = {"dram__bytes_read.sum"};
  EXPECT_TRUE(within(median(on(counters, user.get()), "dram__bytes_read.sum"),
                     median(on(counters, cudaStreamLegacy), "dram__bytes_read.sum"), kCounterPct,
                     "counters dram__bytes_read.sum, cuBLAS SGEMM on a user stream"));
  cublasDestroy(handle);
}
#endif

// Two 100 us spins on two non-blocking streams in one region run at the same time: both are
// measured, their durations as when they run one after the other, and the overlap is reported
// (OverlapNs in the samples, OverlappedRuns in the summary) rather than hidden in their sum.
TEST(LaunchPatterns, TwoKernelsAtTheSameTimeAreBothMeasuredAndTheirOverlapReported) {
  KSCOPE_REQUIRE_GPU();
  constexpr std::uint64_t kSpinNs = 100'000;
  Stream first(cudaStreamNonBlocking), second(cudaStreamNonBlocking);
  const auto pair = [&](cudaStream_t x, cudaStream_t y) {
    return [&, x, y](const Config&) {
      Annotation region("pair");
      kscope_test::launch_spin(kSpinNs, x);
      kscope_test::launch_spin(kSpinNs, y);
    };
  };
  kscope::Settings s = settings(kscope::Backend::cupti);
  s.combine_kernel_metrics = [](double x, double y) { return x + y; };
  const kscope::Results together = kscope::profile(kscope::Sweep(), s, pair(first.get(), second.get()));
  const kscope::Results serial = kscope::profile(kscope::Sweep(), s, pair(cudaStreamLegacy, cudaStreamLegacy));
  const kscope::SummaryRow& row = together.at("pair", "cupti__kernel_duration", 0);
  std::printf("[result] two spins at once: cupti %.1f us added, %zu of %zu runs overlapped, overlap %.1f us in the "
              "first run\n", row.stats.median / 1e3, row.overlapped_runs, row.stats.count,
              together.samples()[0].overlap_ns / 1e3);
  EXPECT_TRUE(kscope_test::spin_measured(row.stats.median, 2 * kSpinNs, kscope_test::kCupti, 2)) << "both measured";
  EXPECT_TRUE(within(row.stats.median, serial.at("pair", "cupti__kernel_duration", 0).stats.median, kDurationPct,
                     "cupti, two spins at once, added"));
  EXPECT_EQ(row.overlapped_runs, row.stats.count);
  EXPECT_EQ(serial.at("pair", "cupti__kernel_duration", 0).overlapped_runs, 0u);
  // The second spin starts within a launch (microseconds) of the first: most of their 100 us overlap.
  for (const kscope::SampleRow& sample : together.samples()) EXPECT_GT(sample.overlap_ns, 0.8 * kSpinNs);

  // As one range, the region's span: one spin's length, and the overlap still reported.
  s.combine_kernel_metrics = nullptr;
  s.replay_mode = kscope::ReplayMode::range;
  const kscope::SummaryRow span =
      kscope::profile(kscope::Sweep(), s, pair(first.get(), second.get())).at("pair", "cupti__kernel_duration", 0);
  EXPECT_LT(span.stats.median, 1.5 * kSpinNs);
  EXPECT_EQ(span.overlapped_runs, span.stats.count);
  // The events backend brackets both streams: the region spans the two spins side by side.
  s.backend = kscope::Backend::events;
  s.replay_mode = kscope::ReplayMode::kernel;
  const double events = kscope::profile(kscope::Sweep(), s, pair(first.get(), second.get()))
                            .at("pair", "events__region_duration", 0)
                            .stats.median;
  std::printf("[result] two spins at once: events %.1f us\n", events / 1e3);
  EXPECT_TRUE(kscope_test::spin_measured(events, kSpinNs, kscope_test::kEvents)) << "the span of both";
}

// ---- Another process on the GPU ---------------------------------------------------------------

// A second process spinning on the GPU (gpu_spinner: one block at a time, so both fit) for the whole
// measurement: NVML shows it busy in every sample, so the runs after its first sample are flagged;
// once it has exited, none is.
TEST(OtherProcess, AProcessSpinningOnTheGpuIsFlaggedOnTheRunsItTouched) {
  KSCOPE_REQUIRE_GPU();
  constexpr double kSpinnerSeconds = 8;
  char seconds[32];
  std::snprintf(seconds, sizeof seconds, "%g", kSpinnerSeconds);
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, ready[1], STDOUT_FILENO);
  posix_spawn_file_actions_addclose(&actions, ready[0]);
  char* argv[] = {const_cast<char*>(KSCOPE_GPU_SPINNER), seconds, nullptr};
  pid_t spinner = 0;
  ASSERT_EQ(posix_spawn(&spinner, KSCOPE_GPU_SPINNER, &actions, nullptr, argv, environ), 0);
  posix_spawn_file_actions_destroy(&actions);
  close(ready[1]);
  char line[64] = {};
  ASSERT_GT(read(ready[0], line, sizeof line - 1), 0) << "the spinner never started";
  close(ready[0]);
  // NVML samples process utilization every 1/6 s to 1 s: let it sample the spinner first.
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));

  kscope::Settings s = settings(kscope::Backend::cupti);
  s.cache_control = kscope::CacheControl::none;
  s.runs = 20;
  const auto body = [](const Config&) {
    Annotation region("spin");
    kscope_test::launch_spin(50'000'000);  // 50 ms: the measurement lasts about a second
  };
  const kscope::Results shared = kscope::profile(kscope::Sweep(), s, body);
  int status = 0;
  waitpid(spinner, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "the spinner failed";
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  const kscope::Results alone = kscope::profile(kscope::Sweep(), s, body);

  const kscope::SummaryRow& flagged = shared.at("spin", "cupti__kernel_duration", 0);
  const kscope::SummaryRow& clean = alone.at("spin", "cupti__kernel_duration", 0);
  std::printf("[result] another process spinning on the GPU: %zu of %zu runs flagged; after it exited %zu of %zu\n",
              flagged.other_process_runs, flagged.stats.count, clean.other_process_runs, clean.stats.count);
  EXPECT_GE(flagged.other_process_runs, flagged.stats.count / 2) << "NVML did not show the spinner busy";
  EXPECT_EQ(clean.other_process_runs, 0u);
}

}  // namespace

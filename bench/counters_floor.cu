// What CUPTI's range profiler itself costs per kernel range and pass, and whether an L2 flush can
// stay out of the ranges (issue 14): are the counter backend's targets (8-pass set <= 3 ms, one
// metric <= 0.2 ms per profiled kernel) below CUPTI's own floor?
//
//   BASE   the kernels without any profiler: ms per launch (launch + GPU time, synchronised once).
//   FLOOR  CUPTI_AutoRange + CUPTI_UserReplay, N back-to-back launches of one kernel inside one
//          start/stop per pass, no flush, N = 50 and 200 with one counter data image for 200
//          ranges (so image size cancels). Per range and pass: the slope from 50 to 200 kernels
//          divided by the passes, split into where the wall time went (start+stop, the launch loop,
//          decode, evaluate); per kernel: the same slope over all passes.
//          api raw: CUPTI called directly, as cupti_range_profiler.h documents it;
//          api kscope: kscope's RangeProfiler and MetricConfig (its decode includes the evaluation).
//          max_per_pass: SetConfig's maxRangesPerPass (kscope's backend passes 512 whatever the batch).
//          sets: "1" gpu__time_duration.sum; "bench5" the 5 metrics of counters_overhead/_stages
//          (issue 14's 8-pass set); "sol4" kscope::sol_metrics(), the backend's default.
//          PASS: the launch loop's time per range, pass by pass (which passes cost).
//   METRIC each metric of the sets alone (raw API, the copy): its passes and cost per range and pass.
//   FLUSH  raw API, AutoRange, 50 runs of [flush, 16 MiB copy] in one start/stop per pass, for the
//          1-pass set "3" (duration, dram read, dram write) and the 8-pass "bench5": ranges per
//          run, ms per run (the whole batch / 50), the copy's values (the last range of a run), and
//          each range's duration. Cold and clean: the copy reads ~16.8 MB from DRAM and writes
//          almost nothing (its 16 MiB stay in the write-back L2); lines a flush leaves dirty show as
//          ~16-19 MB of DRAM writes and a longer duration.
//          none: warm L2. kscope: src/device/l2_flush.cu (memset + discard kernel, launched one by one as
//          the counters backend does: as a graph it breaks AutoRange passes). memset: a
//          memset of L2 bytes at the start of a 2x L2 allocation; memset_whole: of a whole
//          allocation of L2 bytes, as in kscope's flush (its range count may differ). memcpy_d2d: a device-to-device cudaMemcpyAsync of 2x L2 (copy engine).
//          read_1x / read_2x: a read kernel over L2 / 2x L2 bytes (clean lines only, one launch).
//          other_context: kscope's flush in a second CUDA context, host-synchronised on both sides
//          (the range profiler is enabled on the measured context only); other_context_events: the
//          same ordered by cross-context event waits instead of host synchronisation.
// Times in ms, each the median of kReps batches after one warm-up. Needs counter permission; never
// changes clocks, power or modes. Run: counters_floor (about two minutes on an H200).
#include <cuda.h>
#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_range_profiler.h>
#include <cupti_target.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "backends/counters/counter_errors.hpp"
#include "backends/cupti_subscriber.hpp"
#include "backends/counters/cupti_params.hpp"
#include "backends/counters/profiler_host.hpp"
#include "backends/counters/range_profiler.hpp"
#include "device/l2_flush.hpp"
#include "gpu_test_support.hpp"
#include "kscope/kscope.hpp"

namespace {

using Clock = std::chrono::steady_clock;
namespace counters = kscope::counters;

constexpr std::size_t kFloats = std::size_t(1) << 22;  // 16 MiB per copy
constexpr int kReps = 3;
constexpr std::size_t kFewKernels = 50, kManyKernels = 200;
constexpr std::size_t kFlushRuns = 50, kFlushImageRanges = 4 * kFlushRuns;

const std::vector<std::string> kOneMetric{"gpu__time_duration.sum"};
// The 5-metric set of counters_overhead and counters_stages, which issue 14's targets were measured with.
const std::vector<std::string> kBenchSet{"gpu__time_duration.sum", "dram__bytes_read.sum",
                                         "sm__throughput.avg.pct_of_peak_sustained_elapsed",
                                         "dram__throughput.avg.pct_of_peak_sustained_elapsed",
                                         "lts__t_sector_hit_rate.pct"};
const std::vector<std::string> kFlushMetrics{"gpu__time_duration.sum", "dram__bytes_read.sum",
                                             "dram__bytes_write.sum"};

double ms_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

double median(const std::vector<double>& v) { return v.empty() ? 0.0 : kscope::summarize(v, 0).median; }

// The counter backend's error texts (permission above all), without its state machine.
void cupti(CUptiResult status, const char* call) { counters::check_counters(status, call); }

void driver(CUresult status, const char* call) {
  if (status != CUDA_SUCCESS) throw std::runtime_error(std::string(call) + " failed: CUresult " + std::to_string(status));
}

// CUPTI's calls, one function each, as cupti_profiler_host.h and cupti_range_profiler.h document
// them: what RawProfiler and the FIRST rows are made of.
namespace raw {

using Names = std::vector<const char*>;

CUpti_Profiler_Host_Object* host_object(const std::string& chip, const std::vector<std::uint8_t>* availability) {
  auto p = CUPTI_PARAMS(CUpti_Profiler_Host_Initialize_Params);
  p.profilerType = CUPTI_PROFILER_TYPE_RANGE_PROFILER;
  p.pChipName = chip.c_str();
  p.pCounterAvailabilityImage = availability ? availability->data() : nullptr;
  cupti(cuptiProfilerHostInitialize(&p), "cuptiProfilerHostInitialize");
  return p.pHostObject;
}

void free_host_object(CUpti_Profiler_Host_Object* host) {
  auto p = CUPTI_PARAMS(CUpti_Profiler_Host_Deinitialize_Params);
  p.pHostObject = host;
  if (host) cuptiProfilerHostDeinitialize(&p);
}

void add_metrics(CUpti_Profiler_Host_Object* host, Names& names) {
  auto p = CUPTI_PARAMS(CUpti_Profiler_Host_ConfigAddMetrics_Params);
  p.pHostObject = host;
  p.ppMetricNames = names.data();
  p.numMetrics = names.size();
  cupti(cuptiProfilerHostConfigAddMetrics(&p), "cuptiProfilerHostConfigAddMetrics");
}

std::vector<std::uint8_t> config_image(CUpti_Profiler_Host_Object* host) {
  auto size = CUPTI_PARAMS(CUpti_Profiler_Host_GetConfigImageSize_Params);
  size.pHostObject = host;
  cupti(cuptiProfilerHostGetConfigImageSize(&size), "cuptiProfilerHostGetConfigImageSize");
  std::vector<std::uint8_t> image(size.configImageSize);
  auto get = CUPTI_PARAMS(CUpti_Profiler_Host_GetConfigImage_Params);
  get.pHostObject = host;
  get.configImageSize = image.size();
  get.pConfigImage = image.data();
  cupti(cuptiProfilerHostGetConfigImage(&get), "cuptiProfilerHostGetConfigImage");
  return image;
}

std::size_t passes(const std::vector<std::uint8_t>& config) {
  auto p = CUPTI_PARAMS(CUpti_Profiler_Host_GetNumOfPasses_Params);
  p.configImageSize = config.size();
  p.pConfigImage = const_cast<std::uint8_t*>(config.data());
  cupti(cuptiProfilerHostGetNumOfPasses(&p), "cuptiProfilerHostGetNumOfPasses");
  return p.numOfPasses;
}

CUpti_RangeProfiler_Object* enable(CUcontext context) {
  auto p = CUPTI_PARAMS(CUpti_RangeProfiler_Enable_Params);
  p.ctx = context;
  cupti(cuptiRangeProfilerEnable(&p), "cuptiRangeProfilerEnable");
  return p.pRangeProfilerObject;
}

void disable(CUpti_RangeProfiler_Object* object) {
  auto p = CUPTI_PARAMS(CUpti_RangeProfiler_Disable_Params);
  p.pRangeProfilerObject = object;
  if (object) cuptiRangeProfilerDisable(&p);
}

std::size_t counter_data_size(CUpti_RangeProfiler_Object* object, Names& names, std::size_t ranges) {
  auto p = CUPTI_PARAMS(CUpti_RangeProfiler_GetCounterDataSize_Params);
  p.pRangeProfilerObject = object;
  p.pMetricNames = names.data();
  p.numMetrics = names.size();
  p.maxNumOfRanges = ranges;
  p.maxNumRangeTreeNodes = static_cast<std::uint32_t>(ranges);
  cupti(cuptiRangeProfilerGetCounterDataSize(&p), "cuptiRangeProfilerGetCounterDataSize");
  return p.counterDataSize;
}

void initialize_image(CUpti_RangeProfiler_Object* object, std::vector<std::uint8_t>& data) {
  auto p = CUPTI_PARAMS(CUpti_RangeProfiler_CounterDataImage_Initialize_Params);
  p.pRangeProfilerObject = object;
  p.counterDataSize = data.size();
  p.pCounterData = data.data();
  cupti(cuptiRangeProfilerCounterDataImageInitialize(&p), "cuptiRangeProfilerCounterDataImageInitialize");
}

void set_config(CUpti_RangeProfiler_Object* object, const std::vector<std::uint8_t>& config,
                std::vector<std::uint8_t>& data, CUpti_ProfilerRange range, std::size_t max_per_pass,
                CUpti_ProfilerReplayMode replay = CUPTI_UserReplay) {
  auto p = CUPTI_PARAMS(CUpti_RangeProfiler_SetConfig_Params);
  p.pRangeProfilerObject = object;
  p.configSize = config.size();
  p.pConfig = config.data();
  p.counterDataImageSize = data.size();
  p.pCounterDataImage = data.data();
  p.range = range;
  p.replayMode = replay;
  p.maxRangesPerPass = max_per_pass;
  p.numNestingLevels = 1;
  p.minNestingLevel = 1;
  p.passIndex = 0;
  p.targetNestingLevel = 1;
  cupti(cuptiRangeProfilerSetConfig(&p), "cuptiRangeProfilerSetConfig");
}

void start(CUpti_RangeProfiler_Object* object) {
  auto p = CUPTI_PARAMS(CUpti_RangeProfiler_Start_Params);
  p.pRangeProfilerObject = object;
  cupti(cuptiRangeProfilerStart(&p), "cuptiRangeProfilerStart");
}

bool stop(CUpti_RangeProfiler_Object* object) {  // true once every pass was submitted
  auto p = CUPTI_PARAMS(CUpti_RangeProfiler_Stop_Params);
  p.pRangeProfilerObject = object;
  cupti(cuptiRangeProfilerStop(&p), "cuptiRangeProfilerStop");
  return p.isAllPassSubmitted != 0;
}

std::size_t decode(CUpti_RangeProfiler_Object* object) {  // the ranges dropped
  auto p = CUPTI_PARAMS(CUpti_RangeProfiler_DecodeData_Params);
  p.pRangeProfilerObject = object;
  cupti(cuptiRangeProfilerDecodeData(&p), "cuptiRangeProfilerDecodeData");
  return p.numOfRangeDropped;
}

std::size_t ranges(const std::vector<std::uint8_t>& data) {
  auto p = CUPTI_PARAMS(CUpti_RangeProfiler_GetCounterDataInfo_Params);
  p.pCounterDataImage = data.data();
  p.counterDataImageSize = data.size();
  cupti(cuptiRangeProfilerGetCounterDataInfo(&p), "cuptiRangeProfilerGetCounterDataInfo");
  return p.numTotalRanges;
}

std::string range_name(const std::vector<std::uint8_t>& data, std::size_t range) {
  auto p = CUPTI_PARAMS(CUpti_RangeProfiler_CounterData_GetRangeInfo_Params);
  p.pCounterDataImage = data.data();
  p.counterDataImageSize = data.size();
  p.rangeIndex = range;
  p.rangeDelimiter = "/";
  cupti(cuptiRangeProfilerCounterDataGetRangeInfo(&p), "cuptiRangeProfilerCounterDataGetRangeInfo");
  return p.rangeName ? p.rangeName : "";
}

// One value per metric of `names` for `range` of the decoded image.
std::vector<double> evaluate(CUpti_Profiler_Host_Object* host, std::vector<std::uint8_t>& data, std::size_t range,
                             Names& names) {
  std::vector<double> values(names.size());
  auto p = CUPTI_PARAMS(CUpti_Profiler_Host_EvaluateToGpuValues_Params);
  p.pHostObject = host;
  p.pCounterDataImage = data.data();
  p.counterDataImageSize = data.size();
  p.rangeIndex = range;
  p.ppMetricNames = names.data();
  p.numMetrics = names.size();
  p.pMetricValues = values.data();
  cupti(cuptiProfilerHostEvaluateToGpuValues(&p), "cuptiProfilerHostEvaluateToGpuValues");
  return values;
}

}  // namespace raw

// CUPTI's range profiler called directly: a host object for the config image and the metric
// evaluation, the target object for the passes. UserReplay; AutoRange unless asked otherwise.
class RawProfiler {
 public:
  RawProfiler(CUcontext context, const std::string& chip, const std::vector<std::uint8_t>& availability,
              const std::vector<std::string>& metrics, std::size_t image_ranges, std::size_t max_per_pass,
              CUpti_ProfilerRange range = CUPTI_AutoRange, CUpti_ProfilerReplayMode replay = CUPTI_UserReplay)
      : metrics_(metrics), max_per_pass_(max_per_pass), range_(range), replay_(replay) {
    for (const auto& m : metrics_) names_.push_back(m.c_str());
    host_ = raw::host_object(chip, &availability);
    raw::add_metrics(host_, names_);
    config_ = raw::config_image(host_);
    object_ = raw::enable(context);
    counter_data_.resize(raw::counter_data_size(object_, names_, image_ranges));
  }
  ~RawProfiler() {
    raw::disable(object_);
    raw::free_host_object(host_);
  }
  RawProfiler(const RawProfiler&) = delete;
  RawProfiler& operator=(const RawProfiler&) = delete;

  void begin_batch() {
    raw::initialize_image(object_, counter_data_);
    raw::set_config(object_, config_, counter_data_, range_, max_per_pass_, replay_);
  }
  void start() { raw::start(object_); }
  bool stop() { return raw::stop(object_); }
  void push(const char* name) {  // UserRange only
    auto p = CUPTI_PARAMS(CUpti_RangeProfiler_PushRange_Params);
    p.pRangeProfilerObject = object_;
    p.pRangeName = name;
    cupti(cuptiRangeProfilerPushRange(&p), "cuptiRangeProfilerPushRange");
  }
  void pop() {
    auto p = CUPTI_PARAMS(CUpti_RangeProfiler_PopRange_Params);
    p.pRangeProfilerObject = object_;
    cupti(cuptiRangeProfilerPopRange(&p), "cuptiRangeProfilerPopRange");
  }
  std::size_t decode() { return raw::decode(object_); }
  std::vector<std::vector<double>> evaluate() {  // per range, per metric
    std::vector<std::vector<double>> out;
    for (std::size_t r = 0, n = raw::ranges(counter_data_); r < n; ++r)
      out.push_back(raw::evaluate(host_, counter_data_, r, names_));
    return out;
  }

 private:
  std::vector<std::string> metrics_;
  raw::Names names_;
  std::size_t max_per_pass_;
  CUpti_ProfilerRange range_;
  CUpti_ProfilerReplayMode replay_;
  CUpti_Profiler_Host_Object* host_ = nullptr;
  CUpti_RangeProfiler_Object* object_ = nullptr;
  std::vector<std::uint8_t> config_, counter_data_;
};

// kscope's own wrappers behind RawProfiler's interface: their decode evaluates too.
class KscopeProfiler {
 public:
  KscopeProfiler(CUcontext context, const std::string& chip, const std::vector<std::uint8_t>& availability,
                 const std::vector<std::string>& metrics, std::size_t image_ranges)
      : config_(std::make_shared<const counters::MetricConfig>(chip, metrics, availability)),
        profiler_(context, config_, counters::RangeKind::per_kernel, image_ranges),
        image_ranges_(image_ranges) {}
  void begin_batch() { profiler_.begin_batch(image_ranges_); }
  void start() { profiler_.start(); }
  bool stop() { return profiler_.stop(); }
  std::size_t decode() {  // kscope throws on dropped ranges
    values_.clear();
    for (auto& range : profiler_.decode()) values_.push_back(std::move(range.values));
    return 0;
  }
  std::vector<std::vector<double>> evaluate() { return std::move(values_); }

 private:
  std::shared_ptr<const counters::MetricConfig> config_;
  counters::RangeProfiler profiler_;
  std::size_t image_ranges_;
  std::vector<std::vector<double>> values_;
};

// One batch: its passes, each running `one_pass` between start and stop; wall time per stage.
struct Batch {
  double setup = 0, start_stop = 0, launch = 0, decode = 0, evaluate = 0, total = 0;
  std::vector<double> launch_by_pass;
  std::size_t passes = 0, dropped = 0;
  std::vector<std::vector<double>> ranges;
};

template <class Profiler>
Batch profile_batch(Profiler& profiler, const std::function<void()>& one_pass) {
  Batch b;
  const auto start = Clock::now();
  auto mark = start;
  const auto lap = [&](double& stage) {
    const auto now = Clock::now();
    stage += ms_between(mark, now);
    mark = now;
  };
  profiler.begin_batch();
  lap(b.setup);
  for (bool more = true; more; ++b.passes) {
    profiler.start();
    lap(b.start_stop);
    const double launched = b.launch;
    one_pass();
    lap(b.launch);
    b.launch_by_pass.push_back(b.launch - launched);
    more = !profiler.stop();
    lap(b.start_stop);
  }
  b.dropped = profiler.decode();
  lap(b.decode);
  b.ranges = profiler.evaluate();
  lap(b.evaluate);
  b.total = ms_between(start, mark);
  return b;
}

// The median of kReps batches after one warm-up, stage by stage.
template <class Profiler>
Batch median_batch(Profiler& profiler, const std::function<void()>& one_pass) {
  std::vector<Batch> batches;
  for (int rep = 0; rep <= kReps; ++rep) {
    Batch b = profile_batch(profiler, one_pass);
    if (rep > 0) batches.push_back(std::move(b));
  }
  Batch m = batches.back();
  const auto med = [&](double Batch::*stage) {
    std::vector<double> v;
    for (const auto& b : batches) v.push_back(b.*stage);
    m.*stage = median(v);
  };
  for (auto stage : {&Batch::setup, &Batch::start_stop, &Batch::launch, &Batch::decode, &Batch::evaluate,
                     &Batch::total})
    med(stage);
  for (std::size_t pass = 0; pass < m.launch_by_pass.size(); ++pass) {
    std::vector<double> v;
    for (const auto& b : batches) v.push_back(b.launch_by_pass.at(pass));
    m.launch_by_pass[pass] = median(v);
  }
  return m;
}

struct Kernel {
  const char* name;
  std::function<void()> launch;
};

std::function<void()> launches(const Kernel& kernel, std::size_t n) {
  return [&kernel, n] {
    for (std::size_t k = 0; k < n; ++k) kernel.launch();
  };
}

void base_row(const Kernel& kernel) {
  const auto time = [&](std::size_t n) {
    std::vector<double> ms;
    for (int rep = 0; rep <= kReps; ++rep) {
      const auto t0 = Clock::now();
      launches(kernel, n)();
      kscope_test::check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
      if (rep > 0) ms.push_back(ms_between(t0, Clock::now()));
    }
    return median(ms);
  };
  const double few = time(kFewKernels), many = time(kManyKernels);
  std::printf("BASE  %-6s %.4f\n", kernel.name, (many - few) / double(kManyKernels - kFewKernels));
}

// Slopes from kFewKernels to kManyKernels back-to-back launches, per range and pass unless named.
struct Slopes {
  std::size_t passes = 0;
  double total = 0, start_stop = 0, launch = 0, decode = 0, evaluate = 0;
  double per_kernel = 0;             // over all passes
  double setup = 0;                  // absolute, at kManyKernels
  std::vector<double> launch_by_pass;  // per range, pass by pass
};

template <class Profiler>
Slopes floor_slopes(Profiler& profiler, const Kernel& kernel, const std::string& what) {
  const Batch few = median_batch(profiler, launches(kernel, kFewKernels));
  const Batch many = median_batch(profiler, launches(kernel, kManyKernels));
  if (many.ranges.size() != kManyKernels || many.dropped != 0)
    std::printf("# %s: %zu ranges decoded, %zu dropped, for %zu kernels\n", what.c_str(), many.ranges.size(),
                many.dropped, kManyKernels);
  const double kernels = double(kManyKernels - kFewKernels), range_passes = kernels * double(many.passes);
  Slopes s;
  s.passes = many.passes;
  s.total = (many.total - few.total) / range_passes;
  s.start_stop = (many.start_stop - few.start_stop) / range_passes;
  s.launch = (many.launch - few.launch) / range_passes;
  s.decode = (many.decode - few.decode) / range_passes;
  s.evaluate = (many.evaluate - few.evaluate) / range_passes;
  s.per_kernel = (many.total - few.total) / kernels;
  s.setup = many.setup;
  for (std::size_t pass = 0; pass < many.passes; ++pass)
    s.launch_by_pass.push_back((many.launch_by_pass[pass] - few.launch_by_pass[pass]) / kernels);
  return s;
}

void print_floor_header() {
  std::printf(
      "FLOOR api    kernel metrics passes image_ranges max_per_pass | per range and pass: total start_stop launch "
      "decode evaluate | per kernel | setup   (ms; slopes from %zu to %zu kernels; setup: image init + SetConfig "
      "at %zu)\n",
      kFewKernels, kManyKernels, kManyKernels);
}

template <class Profiler>
void floor_row(const char* api, Profiler& profiler, const Kernel& kernel, const char* metrics_name,
               std::size_t max_per_pass) {
  const Slopes s = floor_slopes(profiler, kernel, std::string(api) + " " + kernel.name + " " + metrics_name);
  std::printf("FLOOR %-6s %-6s %-7s %6zu %12zu %12zu | %.4f %.4f %.4f %.4f %.4f | %.4f | %.2f\n", api, kernel.name,
              metrics_name, s.passes, kManyKernels, max_per_pass, s.total, s.start_stop, s.launch, s.decode,
              s.evaluate, s.per_kernel, s.setup);
  if (s.passes > 1) {
    std::printf("PASS  %-6s %-6s %-7s launch per range, pass 1..%zu:", api, kernel.name, metrics_name, s.passes);
    for (double ms : s.launch_by_pass) std::printf(" %.4f", ms);
    std::printf("\n");
  }
  std::fflush(stdout);
}

// One metric alone (raw API, the copy): which metrics make the passes that cost.
void metric_row(CUcontext context, const std::string& chip, const std::vector<std::uint8_t>& availability,
                const Kernel& kernel, const std::string& metric) {
  RawProfiler raw(context, chip, availability, {metric}, kManyKernels, kManyKernels);
  const Slopes s = floor_slopes(raw, kernel, metric);
  std::printf("METRIC %6zu %9.4f %10.4f  %s\n", s.passes, s.total, s.per_kernel, metric.c_str());
  std::fflush(stdout);
}

// The L2 flush variants of the FLUSH rows, each enqueued on the legacy stream of the measured context.
class Flushes {
 public:
  Flushes() : kscope_(0) {
    int l2 = 0;
    kscope_test::check(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, 0), "cudaDeviceGetAttribute(L2)");
    l2_bytes_ = static_cast<std::size_t>(l2);
    kscope_test::check(cudaMalloc(&from_, 2 * l2_bytes_), "cudaMalloc");
    kscope_test::check(cudaMalloc(&to_, 2 * l2_bytes_), "cudaMalloc");
    kscope_test::check(cudaMalloc(&whole_, l2_bytes_), "cudaMalloc");
    driver(cuCtxGetCurrent(&measured_), "cuCtxGetCurrent");
    CUdevice device = 0;
    driver(cuCtxGetDevice(&device), "cuCtxGetDevice");
    CUctxCreateParams params{};
    driver(cuCtxCreate(&other_, &params, 0, device), "cuCtxCreate");  // becomes current
    other_flush_.emplace(0);
    kscope_test::check(cudaEventCreateWithFlags(&other_done_, cudaEventDisableTiming), "cudaEventCreate(other)");
    driver(cuCtxSetCurrent(measured_), "cuCtxSetCurrent");
    kscope_test::check(cudaEventCreateWithFlags(&measured_done_, cudaEventDisableTiming), "cudaEventCreate");
  }
  ~Flushes() {
    cudaEventDestroy(measured_done_);
    cuCtxSetCurrent(other_);
    cudaEventDestroy(other_done_);
    other_flush_.reset();
    cuCtxSetCurrent(measured_);
    cuCtxDestroy(other_);
    cudaFree(from_);
    cudaFree(to_);
    cudaFree(whole_);
  }
  Flushes(const Flushes&) = delete;
  Flushes& operator=(const Flushes&) = delete;

  std::size_t l2_bytes() const { return l2_bytes_; }

  void flush(const std::string& name) {
    if (name == "kscope") kscope_.enqueue(cudaStreamLegacy);  // one by one, as the counters backend launches it
    if (name == "memset")
      kscope_test::check(cudaMemsetAsync(from_, 0, l2_bytes_, cudaStreamLegacy), "cudaMemsetAsync");
    if (name == "memset_whole")  // as kscope's flush has it: one whole allocation of the L2's size
      kscope_test::check(cudaMemsetAsync(whole_, 0, l2_bytes_, cudaStreamLegacy), "cudaMemsetAsync");
    if (name == "read_1x" || name == "read_2x")  // clean lines only: evicts without leaving anything dirty
      kscope_test::launch_read(static_cast<const float*>(from_), (name == "read_1x" ? 1 : 2) * l2_bytes_ / sizeof(float),
                               sink_.get(), cudaStreamLegacy);
    if (name == "memcpy_d2d")
      kscope_test::check(cudaMemcpyAsync(to_, from_, 2 * l2_bytes_, cudaMemcpyDeviceToDevice, cudaStreamLegacy),
                         "cudaMemcpyAsync");
    if (name == "other_context") {
      driver(cuCtxSynchronize(), "cuCtxSynchronize(measured)");
      driver(cuCtxSetCurrent(other_), "cuCtxSetCurrent(other)");
      other_flush_->flush(cudaStreamLegacy);
      driver(cuCtxSynchronize(), "cuCtxSynchronize(other)");
      driver(cuCtxSetCurrent(measured_), "cuCtxSetCurrent(measured)");
    }
    if (name == "other_context_events") {  // the same order, kept by the GPU: no host wait
      kscope_test::check(cudaEventRecord(measured_done_, cudaStreamLegacy), "cudaEventRecord(measured)");
      driver(cuCtxSetCurrent(other_), "cuCtxSetCurrent(other)");
      kscope_test::check(cudaStreamWaitEvent(cudaStreamLegacy, measured_done_, 0), "cudaStreamWaitEvent(other)");
      other_flush_->flush(cudaStreamLegacy);
      kscope_test::check(cudaEventRecord(other_done_, cudaStreamLegacy), "cudaEventRecord(other)");
      driver(cuCtxSetCurrent(measured_), "cuCtxSetCurrent(measured)");
      kscope_test::check(cudaStreamWaitEvent(cudaStreamLegacy, other_done_, 0), "cudaStreamWaitEvent(measured)");
    }
  }

 private:
  kscope::device::L2Flusher kscope_;
  kscope_test::DeviceFloats sink_{1};
  std::size_t l2_bytes_ = 0;
  void* from_ = nullptr;
  void* to_ = nullptr;
  void* whole_ = nullptr;
  CUcontext measured_ = nullptr, other_ = nullptr;
  cudaEvent_t measured_done_ = nullptr, other_done_ = nullptr;  // each recorded in its own context
  std::optional<kscope::device::L2Flusher> other_flush_;  // lives in other_
};

void print_flush_header(std::size_t l2_bytes) {
  std::printf(
      "FLUSH metrics flush                passes per_run dropped | ms_per_run | copy: us dram_read_MB dram_write_MB | "
      "us of each range of a run   (%zu runs of [flush, copy of %zu MiB] in each pass; L2 %.1f MiB; the copy is "
      "the last range of a run)\n",
      kFlushRuns, kFloats * sizeof(float) >> 20, double(l2_bytes) / (1 << 20));
}

// The median over the batch's runs of metric `m` of range `position` of a run ("-": not collected).
std::string run_median(const Batch& b, std::size_t per_run, std::size_t position, std::ptrdiff_t m, double unit) {
  if (m < 0 || per_run == 0) return "-";
  std::vector<double> v;
  for (std::size_t run = 0; run < kFlushRuns; ++run) v.push_back(b.ranges[run * per_run + position][m]);
  char text[32];
  std::snprintf(text, sizeof text, "%.3f", median(v) / unit);
  return text;
}

void flush_row(const char* metrics_name, const std::vector<std::string>& metrics, const char* flush,
               Flushes& flushes, RawProfiler& profiler, const float* in, float* out) {
  const Batch b = median_batch(profiler, [&] {
    for (std::size_t run = 0; run < kFlushRuns; ++run) {
      flushes.flush(flush);
      kscope_test::launch_copy(in, out, kFloats);
    }
  });
  const std::size_t per_run = b.ranges.size() % kFlushRuns == 0 ? b.ranges.size() / kFlushRuns : 0;
  const auto index = [&](const char* metric) {
    for (std::size_t m = 0; m < metrics.size(); ++m)
      if (metrics[m] == metric) return static_cast<std::ptrdiff_t>(m);
    return std::ptrdiff_t(-1);
  };
  const std::ptrdiff_t duration = index("gpu__time_duration.sum");
  const std::size_t copy = per_run - 1;
  std::printf("FLUSH %-7s %-20s %6zu %7.2f %7zu | %.3f | %s %s %s |", metrics_name, flush, b.passes,
              double(b.ranges.size()) / kFlushRuns, b.dropped, b.total / double(kFlushRuns),
              run_median(b, per_run, copy, duration, 1e3).c_str(),
              run_median(b, per_run, copy, index("dram__bytes_read.sum"), 1e6).c_str(),
              run_median(b, per_run, copy, index("dram__bytes_write.sum"), 1e6).c_str());
  for (std::size_t position = 0; position < per_run; ++position)
    std::printf(" %s", run_median(b, per_run, position, duration, 1e3).c_str());
  std::printf("\n");
  std::fflush(stdout);
}


// VARIANT rows (issue 29): ways to keep the L2 flush out of the profiled ranges, or to make it
// cheaper, against the flush inside them. Each run of the batch: a flush and a host sync (as
// CountersBackend::flush_cache does), kscope's unless the variant names another, then the 16 MiB
// copy; kFlushRuns runs per pass. The copy's values: the median over the runs of each run's last range.
//   inside     AutoRange, the flush's memset and discard kernel launched one by one: they are ranges
//              too (the counter backend before issue 29)
//   graph      AutoRange, the flush as kscope's L2Flusher launches it: one CUDA graph
//   user       UserRange: one range pushed right before the copy and popped after it
//   user_wait  user, with a 20 us device-side spin queued before the push, so that the push and
//              the copy reach a busy GPU back to back
//   kernel     AutoRange + CUPTI_KernelReplay: each run is its own start/stop window, the flush before
//              it, and CUPTI replays the copy for every pass itself (saving and restoring memory)
//   legacy     CUPTI's older Profiler API (cupti_profiler_target.h, deprecated in CUDA 13.0) in a session
//              of its own: AutoRange + UserReplay, profiling disabled during each flush and enabled
//              around the copy, so only the copy is a range; its counter data image made by a range
//              profiler object that is disabled again, the host API's config image (can the two
//              API families share them? the row says). Its Enable/DisableProfiling gate kernels only
//              in that API's own session: on a range profiler's context CUPTI refuses them
//              (CUPTI_ERROR_INVALID_OPERATION), so the range profiler's variants cannot gate the flush so.
//   read_1x    AutoRange, the flush one read kernel over the L2's bytes (the FLUSH rows' read_1x):
//              one launch, and it leaves no dirty line; its kernel is a range, as inside's discard kernel
//   read_2x    the same over twice the L2's bytes
//   kscope     kscope's counters backend on the same runs (alone in its process)
void set_profiling(CUcontext context, bool on) {
  if (on) {
    auto p = CUPTI_PARAMS(CUpti_Profiler_EnableProfiling_Params);
    p.ctx = context;
    cupti(cuptiProfilerEnableProfiling(&p), "cuptiProfilerEnableProfiling");
  } else {
    auto p = CUPTI_PARAMS(CUpti_Profiler_DisableProfiling_Params);
    p.ctx = context;
    cupti(cuptiProfilerDisableProfiling(&p), "cuptiProfilerDisableProfiling");
  }
}

void print_variant(const std::string& variant, const char* set_name, const std::vector<std::string>& metrics,
                   const Batch& b) {
  const std::size_t per_run = b.ranges.size() % kFlushRuns == 0 ? b.ranges.size() / kFlushRuns : 0;
  std::printf("VARIANT %-7s %-10s passes=%zu ranges_per_run=%.2f dropped=%zu ms_per_run=%.4f |", set_name,
              variant.c_str(), b.passes, double(b.ranges.size()) / kFlushRuns, b.dropped, b.total / kFlushRuns);
  for (std::size_t m = 0; m < metrics.size(); ++m)
    std::printf(" %s=%s", metrics[m].c_str(), run_median(b, per_run, per_run - 1, std::ptrdiff_t(m), 1.0).c_str());
  std::printf("\n");
  std::fflush(stdout);
}

// A VARIANT row's flush of each run, then a host sync, as CountersBackend::flush_cache does.
using RunFlush = std::function<void()>;

bool reads_to_flush(const std::string& variant) { return variant == "read_1x" || variant == "read_2x"; }

// `variant`'s flush: kscope's memset and discard kernel one by one, its graph for "graph", or the
// read kernel of `reads` (made on first use: FLUSH rows' buffers) for the read variants.
RunFlush run_flush(const std::string& variant, kscope::device::L2Flusher& l2, std::optional<Flushes>& reads) {
  if (reads_to_flush(variant) && !reads) reads.emplace();
  return [variant, &l2, &reads] {
    if (reads_to_flush(variant)) reads->flush(variant);
    else if (variant == "graph") l2.flush(cudaStreamLegacy);
    else l2.enqueue(cudaStreamLegacy);
    kscope_test::check(cudaStreamSynchronize(cudaStreamLegacy), "cudaStreamSynchronize");
  };
}

// The batch of median total time.
Batch median_by_total(std::vector<Batch> batches) {
  std::sort(batches.begin(), batches.end(), [](const Batch& x, const Batch& y) { return x.total < y.total; });
  return batches[batches.size() / 2];
}

// The kernel variant: kFlushRuns windows per batch, the median batch of kReps after a warm-up.
Batch kernel_replay_batch(RawProfiler& raw, const RunFlush& flush, const float* in, float* out) {
  std::vector<Batch> batches;
  for (int rep = 0; rep <= kReps; ++rep) {
    Batch b;
    const auto start = Clock::now();
    raw.begin_batch();
    for (std::size_t run = 0; run < kFlushRuns; ++run) {
      flush();
      raw.start();
      kscope_test::launch_copy(in, out, kFloats);
      if (!raw.stop()) throw std::runtime_error("kernel replay: passes left after the window's stop");
      b.passes = 1;
    }
    b.dropped = raw.decode();
    b.ranges = raw.evaluate();
    b.total = ms_between(start, Clock::now());
    if (rep > 0) batches.push_back(std::move(b));
  }
  return median_by_total(std::move(batches));
}

// The legacy variant: kFlushRuns runs per pass, the median batch of kReps after a warm-up (the
// counter data image is made before each batch's clock starts).
Batch legacy_gated_batch(CUcontext context, const std::string& chip, const std::vector<std::uint8_t>& availability,
                         const std::vector<std::string>& metrics, const RunFlush& flush, const float* in,
                         float* out) {
  raw::Names names;
  for (const auto& m : metrics) names.push_back(m.c_str());
  CUpti_Profiler_Host_Object* host = raw::host_object(chip, &availability);
  raw::add_metrics(host, names);
  const std::vector<std::uint8_t> config = raw::config_image(host);
  std::vector<Batch> batches;
  try {
    for (int rep = 0; rep <= kReps; ++rep) {
      std::vector<std::uint8_t> data;
      CUpti_RangeProfiler_Object* object = raw::enable(context);
      data.resize(raw::counter_data_size(object, names, kFlushImageRanges));
      raw::initialize_image(object, data);
      raw::disable(object);
      auto scratch_size = CUPTI_PARAMS(CUpti_Profiler_CounterDataImage_CalculateScratchBufferSize_Params);
      scratch_size.counterDataImageSize = data.size();
      scratch_size.pCounterDataImage = data.data();
      cupti(cuptiProfilerCounterDataImageCalculateScratchBufferSize(&scratch_size),
            "cuptiProfilerCounterDataImageCalculateScratchBufferSize");
      std::vector<std::uint8_t> scratch(scratch_size.counterDataScratchBufferSize);
      auto scratch_init = CUPTI_PARAMS(CUpti_Profiler_CounterDataImage_InitializeScratchBuffer_Params);
      scratch_init.counterDataImageSize = data.size();
      scratch_init.pCounterDataImage = data.data();
      scratch_init.counterDataScratchBufferSize = scratch.size();
      scratch_init.pCounterDataScratchBuffer = scratch.data();
      cupti(cuptiProfilerCounterDataImageInitializeScratchBuffer(&scratch_init),
            "cuptiProfilerCounterDataImageInitializeScratchBuffer");

      Batch b;
      const auto start = Clock::now();
      auto session = CUPTI_PARAMS(CUpti_Profiler_BeginSession_Params);
      session.ctx = context;
      session.counterDataImageSize = data.size();
      session.pCounterDataImage = data.data();
      session.counterDataScratchBufferSize = scratch.size();
      session.pCounterDataScratchBuffer = scratch.data();
      session.range = CUPTI_AutoRange;
      session.replayMode = CUPTI_UserReplay;
      session.maxRangesPerPass = kFlushImageRanges;
      session.maxLaunchesPerPass = kFlushImageRanges;
      cupti(cuptiProfilerBeginSession(&session), "cuptiProfilerBeginSession");
      auto set = CUPTI_PARAMS(CUpti_Profiler_SetConfig_Params);
      set.ctx = context;
      set.pConfig = config.data();
      set.configSize = config.size();
      set.minNestingLevel = 1;
      set.numNestingLevels = 1;
      set.targetNestingLevel = 1;
      cupti(cuptiProfilerSetConfig(&set), "cuptiProfilerSetConfig");
      for (bool more = true; more; ++b.passes) {
        auto begin = CUPTI_PARAMS(CUpti_Profiler_BeginPass_Params);
        begin.ctx = context;
        cupti(cuptiProfilerBeginPass(&begin), "cuptiProfilerBeginPass");
        for (std::size_t run = 0; run < kFlushRuns; ++run) {
          flush();
          set_profiling(context, true);
          kscope_test::launch_copy(in, out, kFloats);
          set_profiling(context, false);
        }
        auto end = CUPTI_PARAMS(CUpti_Profiler_EndPass_Params);
        end.ctx = context;
        cupti(cuptiProfilerEndPass(&end), "cuptiProfilerEndPass");
        more = !end.allPassesSubmitted;
      }
      auto flush = CUPTI_PARAMS(CUpti_Profiler_FlushCounterData_Params);
      flush.ctx = context;
      cupti(cuptiProfilerFlushCounterData(&flush), "cuptiProfilerFlushCounterData");
      b.dropped = flush.numRangesDropped;
      auto unset = CUPTI_PARAMS(CUpti_Profiler_UnsetConfig_Params);
      unset.ctx = context;
      cupti(cuptiProfilerUnsetConfig(&unset), "cuptiProfilerUnsetConfig");
      auto end_session = CUPTI_PARAMS(CUpti_Profiler_EndSession_Params);
      end_session.ctx = context;
      cupti(cuptiProfilerEndSession(&end_session), "cuptiProfilerEndSession");
      for (std::size_t r = 0, n = raw::ranges(data); r < n; ++r) b.ranges.push_back(raw::evaluate(host, data, r, names));
      b.total = ms_between(start, Clock::now());
      if (rep > 0) batches.push_back(std::move(b));
    }
  } catch (...) {
    raw::free_host_object(host);
    throw;
  }
  raw::free_host_object(host);
  return median_by_total(std::move(batches));
}

void variant_row(const std::string& variant, const char* set_name, const std::vector<std::string>& metrics,
                 CUcontext context, const std::string& chip, const std::vector<std::uint8_t>& availability,
                 const RunFlush& flush, const float* in, float* out) {
  if (variant == "legacy")
    return print_variant(variant, set_name, metrics,
                         legacy_gated_batch(context, chip, availability, metrics, flush, in, out));
  const bool user = variant == "user" || variant == "user_wait";
  RawProfiler raw(context, chip, availability, metrics, kFlushImageRanges, kFlushImageRanges,
                  user ? CUPTI_UserRange : CUPTI_AutoRange, variant == "kernel" ? CUPTI_KernelReplay : CUPTI_UserReplay);
  if (variant == "kernel") return print_variant(variant, set_name, metrics, kernel_replay_batch(raw, flush, in, out));
  std::vector<std::string> names;  // one range name per run: CUPTI keys a user range by its name
  for (std::size_t run = 0; run < kFlushRuns; ++run) names.push_back(std::to_string(run));
  print_variant(variant, set_name, metrics, median_batch(raw, [&] {
    for (std::size_t run = 0; run < kFlushRuns; ++run) {
      flush();
      if (variant == "user_wait") kscope_test::launch_spin(20'000);
      if (user) raw.push(names[run].c_str());
      kscope_test::launch_copy(in, out, kFloats);
      if (user) raw.pop();
    }
  }));
}

// FIRST rows (issue 29): one counter result with CUPTI called directly, step by step (ms), in a
// fresh process whose CUDA context exists: what a process's first result costs CUPTI, which steps
// a later call repeats (reuse: the same range profiler object; again: a new one, with each room),
// and what the first start costs by the room (maxRangesPerPass and image ranges) it is given.
class Steps {
 public:
  void begin() { mark_ = Clock::now(); }
  void lap(const char* step) {
    const auto now = Clock::now();
    steps_.emplace_back(step, ms_between(mark_, now));
    mark_ = now;
  }
  void print(const std::string& label) {
    double total = 0;
    std::printf("FIRST %s", label.c_str());
    for (const auto& [step, ms] : steps_) {
      std::printf(" %s=%.2f", step.c_str(), ms);
      total += ms;
    }
    std::printf(" total=%.2f\n", total);
    std::fflush(stdout);
    steps_.clear();
  }

 private:
  std::vector<std::pair<std::string, double>> steps_;
  Clock::time_point mark_;
};

// The config image of `names` on `host`, step by step.
std::vector<std::uint8_t> timed_config_image(CUpti_Profiler_Host_Object* host, raw::Names& names, Steps& steps) {
  raw::add_metrics(host, names);
  steps.lap("add_metrics");
  std::vector<std::uint8_t> image = raw::config_image(host);
  steps.lap("config_image");
  raw::passes(image);
  steps.lap("passes");
  return image;
}

// Enable (when `object` is null), image, SetConfig, one pass per pass over one copy, decode,
// evaluate (and with `bare_host`, a host object without the metrics added: can it evaluate?).
CUpti_RangeProfiler_Object* one_result(CUcontext context, CUpti_RangeProfiler_Object* object, std::size_t room,
                                       const std::vector<std::uint8_t>& config, raw::Names& names,
                                       CUpti_Profiler_Host_Object* host, Steps& steps, const float* in, float* out,
                                       double* value, CUpti_Profiler_Host_Object* bare_host = nullptr,
                                       double* bare_value = nullptr) {
  if (!object) {
    object = raw::enable(context);
    steps.lap("enable");
  }
  std::vector<std::uint8_t> data(raw::counter_data_size(object, names, room));
  steps.lap("data_size");
  raw::initialize_image(object, data);
  steps.lap("image_init");
  raw::set_config(object, config, data, CUPTI_AutoRange, room);
  steps.lap("set_config");
  for (bool more = true; more;) {
    raw::start(object);
    steps.lap("start");
    kscope_test::launch_copy(in, out, kFloats);
    steps.lap("launch");
    more = !raw::stop(object);
    steps.lap("stop");
  }
  raw::decode(object);
  steps.lap("decode");
  raw::ranges(data);
  raw::range_name(data, 0);
  steps.lap("range_info");
  *value = raw::evaluate(host, data, 0, names).at(0);
  steps.lap("evaluate");
  if (bare_host) {
    try {
      *bare_value = raw::evaluate(bare_host, data, 0, names).at(0);
    } catch (const std::exception& e) {
      std::printf("# evaluation with a host object without the metrics failed: %s\n", e.what());
      *bare_value = -1;
    }
    steps.lap("evaluate_bare");
  }
  return object;
}

void first_rows(std::size_t room, const float* in, float* out) {
  const std::string metric = kOneMetric.front();
  raw::Names names{metric.c_str()};
  Steps steps;
  steps.begin();
  kscope::cupti::subscriber();
  steps.lap("subscribe");
  auto init = CUPTI_PARAMS(CUpti_Profiler_Initialize_Params);
  cupti(cuptiProfilerInitialize(&init), "cuptiProfilerInitialize");
  steps.lap("initialize");
  auto chip_name = CUPTI_PARAMS(CUpti_Device_GetChipName_Params);
  chip_name.deviceIndex = 0;
  cupti(cuptiDeviceGetChipName(&chip_name), "cuptiDeviceGetChipName");
  const std::string chip = chip_name.pChipName;
  steps.lap("chip");
  CUdevice device = 0;
  driver(cuCtxGetDevice(&device), "cuCtxGetDevice");
  auto supported = CUPTI_PARAMS(CUpti_Profiler_DeviceSupported_Params);
  supported.cuDevice = device;
  supported.api = CUPTI_PROFILER_RANGE_PROFILING;
  cupti(cuptiProfilerDeviceSupported(&supported), "cuptiProfilerDeviceSupported");
  steps.lap("supported");
  CUcontext context = nullptr;
  driver(cuCtxGetCurrent(&context), "cuCtxGetCurrent");
  auto available = CUPTI_PARAMS(CUpti_Profiler_GetCounterAvailability_Params);
  available.ctx = context;
  cupti(cuptiProfilerGetCounterAvailability(&available), "cuptiProfilerGetCounterAvailability(size)");
  std::vector<std::uint8_t> availability(available.counterAvailabilityImageSize);
  available.pCounterAvailabilityImage = availability.data();
  cupti(cuptiProfilerGetCounterAvailability(&available), "cuptiProfilerGetCounterAvailability");
  steps.lap("availability");
  CUpti_Profiler_Host_Object* catalog = raw::host_object(chip, nullptr);
  steps.lap("catalog_host");
  std::size_t bases = 0;
  for (auto type : {CUPTI_METRIC_TYPE_COUNTER, CUPTI_METRIC_TYPE_RATIO, CUPTI_METRIC_TYPE_THROUGHPUT}) {
    auto p = CUPTI_PARAMS(CUpti_Profiler_Host_GetBaseMetrics_Params);
    p.pHostObject = catalog;
    p.metricType = type;
    cupti(cuptiProfilerHostGetBaseMetrics(&p), "cuptiProfilerHostGetBaseMetrics");
    bases += p.numMetrics;
  }
  steps.lap("catalog_bases");
  auto properties = CUPTI_PARAMS(CUpti_Profiler_Host_GetMetricProperties_Params);
  properties.pHostObject = catalog;
  properties.pMetricName = metric.c_str();
  cupti(cuptiProfilerHostGetMetricProperties(&properties), "cuptiProfilerHostGetMetricProperties");
  steps.lap("properties");
  CUpti_Profiler_Host_Object* host = raw::host_object(chip, &availability);
  steps.lap("config_host");
  const std::vector<std::uint8_t> config = timed_config_image(host, names, steps);
  double value = 0, again = 0, bare = 0;
  CUpti_RangeProfiler_Object* object = one_result(context, nullptr, room, config, names, host, steps, in, out, &value);
  steps.print("fresh room=" + std::to_string(room) + " chip=" + chip + " bases=" + std::to_string(bases) +
              " config_bytes=" + std::to_string(config.size()));
  steps.begin();
  object = one_result(context, object, room, config, names, host, steps, in, out, &again, catalog, &bare);
  steps.print("reuse room=" + std::to_string(room) + " value=" + std::to_string(value) + " again=" +
              std::to_string(again) + " bare_host=" + std::to_string(bare));
  for (std::size_t r : {std::size_t(1), std::size_t(16), std::size_t(512)}) {
    steps.begin();
    raw::disable(object);
    steps.lap("disable");
    object = one_result(context, nullptr, r, config, names, host, steps, in, out, &again);
    steps.print("again room=" + std::to_string(r));
  }
  for (const auto& set : {kBenchSet, kscope::sol_metrics()}) {
    raw::Names set_names;
    for (const auto& m : set) set_names.push_back(m.c_str());
    steps.begin();
    CUpti_Profiler_Host_Object* set_host = raw::host_object(chip, &availability);
    steps.lap("config_host");
    const auto image = timed_config_image(set_host, set_names, steps);
    steps.print("config metrics=" + std::to_string(set.size()) + " bytes=" + std::to_string(image.size()));
    raw::free_host_object(set_host);
  }
  raw::disable(object);
  raw::free_host_object(host);
  raw::free_host_object(catalog);
}

// The process's context, chip and counter availability (CUPTI's profiler initialised).
struct Target {
  CUcontext context = nullptr;
  std::string chip;
  std::vector<std::uint8_t> availability;
};

Target target() {
  Target t;
  kscope_test::check(cudaFree(nullptr), "cudaFree(0)");
  driver(cuCtxGetCurrent(&t.context), "cuCtxGetCurrent");
  auto init = CUPTI_PARAMS(CUpti_Profiler_Initialize_Params);
  cupti(cuptiProfilerInitialize(&init), "cuptiProfilerInitialize");
  auto chip_name = CUPTI_PARAMS(CUpti_Device_GetChipName_Params);
  chip_name.deviceIndex = 0;
  cupti(cuptiDeviceGetChipName(&chip_name), "cuptiDeviceGetChipName");
  t.chip = chip_name.pChipName;
  auto available = CUPTI_PARAMS(CUpti_Profiler_GetCounterAvailability_Params);
  available.ctx = t.context;
  cupti(cuptiProfilerGetCounterAvailability(&available), "cuptiProfilerGetCounterAvailability(size)");
  t.availability.resize(available.counterAvailabilityImageSize);
  available.pCounterAvailabilityImage = t.availability.data();
  cupti(cuptiProfilerGetCounterAvailability(&available), "cuptiProfilerGetCounterAvailability");
  return t;
}

struct Set {
  const char* name;
  std::vector<std::string> metrics;
};

const std::vector<Set>& sets() {
  static const std::vector<Set> all{
      {"1", kOneMetric}, {"bench5", kBenchSet}, {"sol4", kscope::sol_metrics()}, {"3", kFlushMetrics}};
  return all;
}

const Set& set_named(const std::string& name) {
  for (const Set& s : sets())
    if (name == s.name) return s;
  throw std::runtime_error("unknown metric set '" + name + "' (1, bench5, sol4, 3)");
}

// FLUSH rows of the given flushes for one set, on one raw profiler; false once one failed (the
// profiler's state is unknown then, so the rest are not run).
bool flush_rows(const Target& t, const Set& set, const std::vector<std::string>& names, Flushes& flushes,
                const float* in, float* out) {
  RawProfiler raw(t.context, t.chip, t.availability, set.metrics, kFlushImageRanges, kFlushImageRanges);
  for (const auto& name : names) {
    try {
      flush_row(set.name, set.metrics, name.c_str(), flushes, raw, in, out);
    } catch (const std::exception& e) {
      std::printf("FLUSH %-7s %-20s failed: %s\n", set.name, name.c_str(), e.what());
      return false;
    }
  }
  return true;
}

int everything(const float* in, float* out) {
  const Target t = target();
  const auto& [context, chip, availability] = t;
  const Kernel copy{"copy", [&] { kscope_test::launch_copy(in, out, kFloats); }};
  const Kernel empty{"empty", [] { kscope_test::launch_empty(); }};
  const std::vector<Set> floor_sets{sets()[0], sets()[1], sets()[2]};

  std::printf("BASE  kernel ms_per_launch   (no profiler)\n");
  base_row(copy);
  base_row(empty);
  print_floor_header();
  for (const Kernel* kernel : {&copy, &empty})
    for (const Set& set : floor_sets) {
      if (kernel == &empty && &set == &floor_sets[2]) continue;  // sol4 on the copy only: device time
      RawProfiler raw(context, chip, availability, set.metrics, kManyKernels, kManyKernels);
      floor_row("raw", raw, *kernel, set.name, kManyKernels);
    }
  // SetConfig's maxRangesPerPass as kscope's backend sets it: does a pass's limit change the cost?
  {
    RawProfiler raw(context, chip, availability, kBenchSet, kManyKernels, 512);
    floor_row("raw", raw, copy, "bench5", 512);
  }
  for (const Set& set : {floor_sets[0], floor_sets[1]}) {
    KscopeProfiler wrapped(context, chip, availability, set.metrics, kManyKernels);
    floor_row("kscope", wrapped, copy, set.name, kManyKernels);
  }

  std::printf("METRIC passes range_pass per_kernel  name   (ms, raw api, the copy, the metric alone)\n");
  std::vector<std::string> each = kBenchSet;
  for (const auto& m : kscope::sol_metrics())
    if (std::find(each.begin(), each.end(), m) == each.end()) each.push_back(m);
  for (const auto& metric : each) metric_row(context, chip, availability, copy, metric);

  Flushes flushes;
  print_flush_header(flushes.l2_bytes());
  if (!flush_rows(t, set_named("3"),
                  {"none", "kscope", "memset", "memset_whole", "memcpy_d2d", "other_context", "other_context_events"},
                  flushes, in, out))
    return 1;
  return flush_rows(t, set_named("bench5"), {"none", "kscope", "other_context", "other_context_events"}, flushes, in,
                    out)
             ? 0
             : 1;
}

// FLOOR rows of the copy alone, raw API, for the given sets: CUPTI's floor per kernel.
int floor_only(const std::vector<std::string>& set_names, const float* in, float* out) {
  const Target t = target();
  const Kernel copy{"copy", [&] { kscope_test::launch_copy(in, out, kFloats); }};
  print_floor_header();
  for (const auto& name : set_names) {
    const Set& set = set_named(name);
    RawProfiler raw(t.context, t.chip, t.availability, set.metrics, kManyKernels, kManyKernels);
    floor_row("raw", raw, copy, set.name, kManyKernels);
  }
  return 0;
}

// The same runs measured by kscope's counters backend (cache_control all): its values beside the
// variants', and its wall time per run with every fixed cost of the call in it.
void kscope_row(const Set& set, const float* in, float* out) {
  kscope::Settings settings;
  settings.backend = kscope::Backend::counters;
  settings.metrics = set.metrics;
  settings.cache_control = kscope::CacheControl::all;
  settings.runs = kFlushRuns;
  settings.warmup_runs = 0;
  settings.verbosity = kscope::Verbosity::quiet;
  const auto t0 = std::chrono::steady_clock::now();
  const kscope::Results results = kscope::profile(kscope::Sweep(), settings, [&](const kscope::Config&) {
    kscope::Annotation copy("copy");
    kscope_test::launch_copy(in, out, kFloats);
  });
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  std::printf("VARIANT %-7s %-10s passes=%zu ranges_per_run=- dropped=0 ms_per_run=%.4f |", set.name, "kscope",
              results.session().replay_passes, ms / kFlushRuns);
  for (const auto& metric : set.metrics) std::printf(" %s=%.3f", metric.c_str(), results.at("copy", metric, 0).stats.median);
  std::printf("\n");
  std::fflush(stdout);
}

int variants(const std::string& set_name, const std::vector<std::string>& names, const float* in, float* out) {
  if (names == std::vector<std::string>{"kscope"}) {
    kscope_row(set_named(set_name), in, out);
    return 0;
  }
  const std::vector<std::string> known{"inside", "graph", "user", "user_wait", "kernel", "legacy", "read_1x",
                                       "read_2x"};
  for (const auto& name : names)
    if (std::find(known.begin(), known.end(), name) == known.end()) {
      std::fprintf(stderr, "counters_floor: no variant '%s' (inside, graph, user, user_wait, kernel, legacy, "
                           "read_1x, read_2x; or kscope alone)\n", name.c_str());
      return 64;
    }
  const Target t = target();
  kscope::device::L2Flusher l2(0);
  std::optional<Flushes> reads;
  const Set& set = set_named(set_name);
  for (const auto& name : names) {
    try {
      variant_row(name, set.name, set.metrics, t.context, t.chip, t.availability, run_flush(name, l2, reads), in, out);
    } catch (const std::exception& e) {
      std::printf("VARIANT %-7s %-10s failed: %s\n", set.name, name.c_str(), e.what());
      return 1;  // the profiler's state is unknown now
    }
  }
  return 0;
}

}  // namespace


int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  const std::string mode = args.empty() ? "" : args[0];
  if (!(mode.empty() || (mode == "first" && args.size() == 2) || (mode == "floor" && args.size() >= 2) ||
        ((mode == "variant" || mode == "flush") && args.size() >= 3))) {
    std::fprintf(stderr, "usage: %s [first ROOM | floor SET... | variant SET NAME... | flush SET NAME...]\n", argv[0]);
    return 64;
  }
  if (kscope_test::report_no_gpu()) return 2;
  try {
    kscope_test::DeviceFloats in(kFloats), out(kFloats);
    if (mode == "first") {
      kscope_test::launch_copy(in.get(), out.get(), kFloats);  // the context and the module are loaded
      kscope_test::check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
      first_rows(std::stoul(args[1]), in.get(), out.get());
      return 0;
    }
    if (mode == "floor") return floor_only({args.begin() + 1, args.end()}, in.get(), out.get());
    if (mode == "variant") return variants(args[1], {args.begin() + 2, args.end()}, in.get(), out.get());
    if (mode == "flush") {
      Flushes flushes;
      print_flush_header(flushes.l2_bytes());
      return flush_rows(target(), set_named(args[1]), {args.begin() + 2, args.end()}, flushes, in.get(), out.get()) ? 0 : 1;
    }
    return everything(in.get(), out.get());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "counters_floor: %s\n", e.what());
    return 1;
  }
}

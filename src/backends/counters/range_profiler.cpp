#include "backends/counters/range_profiler.hpp"

#include <cupti_profiler_target.h>
#include <cupti_target.h>

#include <map>
#include <mutex>

#include "backends/counters/counter_errors.hpp"
#include "backends/counters/cupti_params.hpp"
#include "backends/cupti_subscriber.hpp"
#include "core/model/caller_language.hpp"
#include "kscope/errors.hpp"

namespace kscope::counters {
namespace {

const char* state_name(int s) {
  static const char* names[] = {"enabled", "configured", "started", "between_passes", "submitted", "decoded",
                                "poisoned"};
  return names[s];
}

}  // namespace

void initialize_profiler() {
  static std::mutex mutex;
  static bool initialized = false;
  std::lock_guard lock(mutex);
  if (initialized) return;
  cupti::subscriber();  // first, as CUPTI asks; it also names a tool that already owns CUPTI
  auto p = CUPTI_PARAMS(CUpti_Profiler_Initialize_Params);
  check_counters(cuptiProfilerInitialize(&p), "cuptiProfilerInitialize");
  initialized = true;
}

std::string chip_of_device(int ordinal) {
  initialize_profiler();
  auto p = CUPTI_PARAMS(CUpti_Device_GetChipName_Params);
  p.deviceIndex = static_cast<std::size_t>(ordinal);
  check_counters(cuptiDeviceGetChipName(&p), "cuptiDeviceGetChipName");
  return p.pChipName;
}

void require_profiling_support(CUdevice device, const std::string& gpu) {
  initialize_profiler();
  auto p = CUPTI_PARAMS(CUpti_Profiler_DeviceSupported_Params);
  p.cuDevice = device;
  p.api = CUPTI_PROFILER_RANGE_PROFILING;
  check_counters(cuptiProfilerDeviceSupported(&p), "cuptiProfilerDeviceSupported");
  if (std::string problem = device_support_problem(p, gpu); !problem.empty()) throw BackendError(problem);
}

const std::vector<std::uint8_t>& counter_availability(CUcontext context) {
  static std::mutex mutex;
  // Never destroyed, as the catalogs; a context's availability does not change while it lives.
  static auto* images = new std::map<CUcontext, std::vector<std::uint8_t>>;
  std::lock_guard lock(mutex);
  if (auto known = images->find(context); known != images->end()) return known->second;
  auto p = CUPTI_PARAMS(CUpti_Profiler_GetCounterAvailability_Params);
  p.ctx = context;
  check_counters(cuptiProfilerGetCounterAvailability(&p), "cuptiProfilerGetCounterAvailability(size)");
  std::vector<std::uint8_t> image(p.counterAvailabilityImageSize);
  p.pCounterAvailabilityImage = image.data();
  check_counters(cuptiProfilerGetCounterAvailability(&p), "cuptiProfilerGetCounterAvailability");
  return (*images)[context] = std::move(image);
}

RangeProfiler::RangeProfiler(CUcontext context, std::shared_ptr<const MetricConfig> config, RangeKind kind,
                             std::size_t max_ranges)
    : context_(context), config_(std::move(config)), kind_(kind), max_ranges_(max_ranges) {
  auto enable = CUPTI_PARAMS(CUpti_RangeProfiler_Enable_Params);
  enable.ctx = context;
  check_counters(cuptiRangeProfilerEnable(&enable), "cuptiRangeProfilerEnable");
  object_ = enable.pRangeProfilerObject;
  state_ = State::enabled;
}

std::size_t RangeProfiler::image_bytes(std::size_t ranges) {
  std::vector<const char*> names;
  for (const auto& m : config_->metrics()) names.push_back(m.c_str());
  auto size = CUPTI_PARAMS(CUpti_RangeProfiler_GetCounterDataSize_Params);
  size.pRangeProfilerObject = object_;
  size.pMetricNames = names.data();
  size.numMetrics = names.size();
  size.maxNumOfRanges = ranges;
  size.maxNumRangeTreeNodes = static_cast<std::uint32_t>(ranges);
  check(cuptiRangeProfilerGetCounterDataSize(&size), "cuptiRangeProfilerGetCounterDataSize");
  return size.counterDataSize;
}

RangeProfiler::~RangeProfiler() { disable(); }

void RangeProfiler::forget() noexcept {
  object_ = nullptr;
  state_ = State::poisoned;
  poison_ = "its CUDA context was destroyed";
}

void RangeProfiler::disable() noexcept {
  if (!object_) return;
  auto p = CUPTI_PARAMS(CUpti_RangeProfiler_Disable_Params);
  p.pRangeProfilerObject = object_;
  cuptiRangeProfilerDisable(&p);
  object_ = nullptr;
}

void RangeProfiler::expect(State wanted, const char* call) const {
  if (state_ == State::poisoned) {
    throw BackendError(std::string(call) + " refused: the range profiler was disabled after an earlier failure (" +
                       poison_ + ")");
  }
  if (state_ != wanted) {
    throw InternalError(std::string(call) + " called in state '" + state_name(static_cast<int>(state_)) +
                       "' instead of '" + state_name(static_cast<int>(wanted)) +
                       "' (kscope bug: please report it with this message)");
  }
}

void RangeProfiler::check(CUptiResult status, const char* call) {
  if (status == CUPTI_SUCCESS) return;
  disable();
  state_ = State::poisoned;
  try {
    check_counters(status, call);
  } catch (const std::exception& e) {
    poison_ = e.what();
    throw;
  }
}

void RangeProfiler::begin_batch(std::size_t ranges) {
  // From `configured`: the previous batch started no pass, so the image is still fresh.
  if (state_ != State::configured && state_ != State::decoded) expect(State::enabled, "RangeProfiler::begin_batch");
  if (ranges == 0 || ranges > max_ranges_) {
    throw InternalError("a counter data image for " + std::to_string(ranges) + " ranges was asked for, outside 1.." +
                        std::to_string(max_ranges_) + " (kscope bug: please report it with this message)");
  }
  if (ranges != image_ranges_) {
    counter_data_.resize(image_bytes(ranges));
    image_ranges_ = ranges;
  }
  auto init = CUPTI_PARAMS(CUpti_RangeProfiler_CounterDataImage_Initialize_Params);
  init.pRangeProfilerObject = object_;
  init.counterDataSize = counter_data_.size();
  init.pCounterData = counter_data_.data();
  check(cuptiRangeProfilerCounterDataImageInitialize(&init), "cuptiRangeProfilerCounterDataImageInitialize");

  auto config = CUPTI_PARAMS(CUpti_RangeProfiler_SetConfig_Params);
  config.pRangeProfilerObject = object_;
  config.configSize = config_->image().size();
  config.pConfig = config_->image().data();
  config.counterDataImageSize = counter_data_.size();
  config.pCounterDataImage = counter_data_.data();
  config.range = kind_ == RangeKind::per_kernel ? CUPTI_AutoRange : CUPTI_UserRange;
  config.replayMode = CUPTI_UserReplay;
  // The pass's limit; an image holding fewer ranges than it is allowed (CUPTI then reports the
  // ranges past the image as dropped), so batches of any size share one profiler.
  config.maxRangesPerPass = max_ranges_;
  config.numNestingLevels = 1;
  config.minNestingLevel = 1;
  config.passIndex = 0;
  config.targetNestingLevel = 1;
  check(cuptiRangeProfilerSetConfig(&config), "cuptiRangeProfilerSetConfig");
  state_ = State::configured;
}

void RangeProfiler::start() {
  if (state_ != State::between_passes) expect(State::configured, "cuptiRangeProfilerStart");
  auto p = CUPTI_PARAMS(CUpti_RangeProfiler_Start_Params);
  p.pRangeProfilerObject = object_;
  check(cuptiRangeProfilerStart(&p), "cuptiRangeProfilerStart");
  state_ = State::started;
}

void RangeProfiler::push_range(const std::string& name) {
  expect(State::started, "cuptiRangeProfilerPushRange");
  if (kind_ != RangeKind::per_region)
    throw InternalError("cuptiRangeProfilerPushRange in AutoRange mode refused (kscope bug: please report it)");
  auto p = CUPTI_PARAMS(CUpti_RangeProfiler_PushRange_Params);
  p.pRangeProfilerObject = object_;
  p.pRangeName = name.c_str();
  check(cuptiRangeProfilerPushRange(&p), "cuptiRangeProfilerPushRange");
}

void RangeProfiler::pop_range() {
  expect(State::started, "cuptiRangeProfilerPopRange");
  if (kind_ != RangeKind::per_region)
    throw InternalError("cuptiRangeProfilerPopRange in AutoRange mode refused (kscope bug: please report it)");
  auto p = CUPTI_PARAMS(CUpti_RangeProfiler_PopRange_Params);
  p.pRangeProfilerObject = object_;
  check(cuptiRangeProfilerPopRange(&p), "cuptiRangeProfilerPopRange");
}

bool RangeProfiler::stop() {
  expect(State::started, "cuptiRangeProfilerStop");
  auto p = CUPTI_PARAMS(CUpti_RangeProfiler_Stop_Params);
  p.pRangeProfilerObject = object_;
  check(cuptiRangeProfilerStop(&p), "cuptiRangeProfilerStop");
  state_ = p.isAllPassSubmitted ? State::submitted : State::between_passes;
  return p.isAllPassSubmitted != 0;
}

std::vector<RangeResult> RangeProfiler::decode() {
  expect(State::submitted, "cuptiRangeProfilerDecodeData");
  auto p = CUPTI_PARAMS(CUpti_RangeProfiler_DecodeData_Params);
  p.pRangeProfilerObject = object_;
  check(cuptiRangeProfilerDecodeData(&p), "cuptiRangeProfilerDecodeData");
  state_ = State::decoded;
  if (p.numOfRangeDropped > 0) {
    throw BackendError("the range profiler dropped " + std::to_string(p.numOfRangeDropped) +
                       " ranges: the counter backend holds at most " + std::to_string(max_ranges_) +
                       (kind_ == RangeKind::per_kernel ? " kernels" : " regions") +
                       " per replay pass (and a run launched more than the runs before it in its batch, or more "
                       "than that). Launch fewer kernels per call of the body (outside annotations too), or use " +
                       detail::spell("Settings::replay_mode = ReplayMode::range", "replay_mode='range'"));
  }
  auto info = CUPTI_PARAMS(CUpti_RangeProfiler_GetCounterDataInfo_Params);
  info.pCounterDataImage = counter_data_.data();
  info.counterDataImageSize = counter_data_.size();
  check(cuptiRangeProfilerGetCounterDataInfo(&info), "cuptiRangeProfilerGetCounterDataInfo");
  std::vector<RangeResult> out;
  for (std::size_t r = 0; r < info.numTotalRanges; ++r) {
    auto range = CUPTI_PARAMS(CUpti_RangeProfiler_CounterData_GetRangeInfo_Params);
    range.pCounterDataImage = counter_data_.data();
    range.counterDataImageSize = counter_data_.size();
    range.rangeIndex = r;
    range.rangeDelimiter = "/";
    check(cuptiRangeProfilerCounterDataGetRangeInfo(&range), "cuptiRangeProfilerCounterDataGetRangeInfo");
    out.push_back({range.rangeName ? range.rangeName : "", config_->evaluate(counter_data_, r)});
  }
  return out;
}

}  // namespace kscope::counters

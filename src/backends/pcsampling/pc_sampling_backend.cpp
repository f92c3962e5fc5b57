#include "backends/pcsampling/pc_sampling_backend.hpp"

#include <algorithm>

#include "backends/counters/counter_errors.hpp"
#include "backends/counters/driver_api.hpp"
#include "backends/counters/kept_profiler.hpp"
#include "backends/cupti_subscriber.hpp"
#include "backends/pcsampling/cubin_store.hpp"
#include "device/cuda_check.hpp"
#include "kscope/errors.hpp"
#include "kscope/metrics.hpp"

namespace kscope {
namespace {

void CUPTIAPI keep_cubin(const void* cubin, std::size_t size) noexcept {
  try {
    pcsampling::CubinStore::process().add(cubin, size);
  } catch (...) {  // out of memory: that module's samples go without lines
  }
}

std::vector<std::string> distinct(const std::vector<std::string>& names) {
  std::vector<std::string> out;
  for (const auto& n : names)
    if (std::find(out.begin(), out.end(), n) == out.end()) out.push_back(n);
  return out;
}

}  // namespace

PcSamplingBackend::PcSamplingBackend(const Settings& settings)
    : device_(settings.device) {
  sampling_.period_log2 = kDefaultSamplingPeriodLog2;
}

PcSamplingBackend::~PcSamplingBackend() { end_session(); }

std::vector<MetricSpec> PcSamplingBackend::metrics() const {
  return {{kPcSamples, "sample",
           "program-counter samples of the kernel's warps in one run (CUPTI PC sampling: every 2^period SM cycles "
           "each SM samples one warp's PC and stall reason)"}};
}

SessionInfo PcSamplingBackend::describe() const {
  SessionInfo info = device_.describe(Backend::named("pcsampling"));
  info.replay_passes = sass_ ? 2 : 1;  // described after begin_session: the SASS metrics pass where it can run
  return info;
}

void PcSamplingBackend::sample_pcs(const LineSampling& sampling) {
  sampling_ = sampling;
  if (sampling_.period_log2 == 0) sampling_.period_log2 = kDefaultSamplingPeriodLog2;
}

void PcSamplingBackend::begin_session(const Settings& settings) {
  device_.begin_session(settings);
  context_ = counters::current_context();
  counters::release_kept_profiler();  // one profiling client per context: a counters call may have kept one
  enable_callbacks();
  try {
    pcs_ = std::make_unique<pcsampling::ContextSampling>(context_, sampling_.period_log2);
  } catch (...) {
    disable_callbacks();
    throw;
  }
  if (sampling_.sass_metrics) {
    try {
      sass_ = std::make_unique<pcsampling::SassCounter>(device_.facts().ordinal, context_);
    } catch (const Error& e) {
      without_sass_counts(e);
    }
  }
}

void PcSamplingBackend::without_sass_counts(const Error& e) {
  notes_.insert(std::string("no executed-instruction counts (SASS metrics): ") + e.what());
  sass_.reset();
  for (auto& [key, in] : instructions_) {  // counts of some runs only would read as the kernel's
    in.executed.reset();
    in.thread_executed.reset();
  }
}

void PcSamplingBackend::end_session() noexcept {
  sass_.reset();
  pcs_.reset();
  disable_callbacks();
}

// Sampling waits for an idle GPU at each recorded region's start (region_begin), so the flush before
// it never runs beside the region's work on any stream. What it must not run beside either is work
// still running from before (a warm-up's kernel on a stream that does not wait for the legacy one,
// such as a PyTorch side stream), which would leave its lines in the cache it empties: the GPU
// drains first. The host waits, as it does at every region's edges here, rather than the cupti
// backend's order on the GPU (backends/stream_order.hpp), whose point is a host that never waits.
void PcSamplingBackend::flush_cache() {
  device_.synchronize();
  device_.flush_l2(cudaStreamLegacy);
}

void PcSamplingBackend::enable_callbacks() {
  // Cubins are kept from the first session on, whichever backend measures later: a module loads once.
  cupti::on_module_loaded(&keep_cubin);
  subscriber_ = cupti::route_callbacks(&PcSamplingBackend::on_callback, this);
  for (CUpti_CallbackId cbid : cupti::kLaunchCallbacks)
    device::check_cupti(cuptiEnableCallback(1, subscriber_, CUPTI_CB_DOMAIN_DRIVER_API, cbid),
                        "cuptiEnableCallback(driver launch)");
}

void PcSamplingBackend::disable_callbacks() noexcept {
  if (!subscriber_) return;
  for (CUpti_CallbackId cbid : cupti::kLaunchCallbacks) cuptiEnableCallback(0, subscriber_, CUPTI_CB_DOMAIN_DRIVER_API, cbid);
  subscriber_ = nullptr;
}

void CUPTIAPI PcSamplingBackend::on_callback(void* self, CUpti_CallbackDomain domain, CUpti_CallbackId,
                                             const void* data) {
  if (domain != CUPTI_CB_DOMAIN_DRIVER_API) return;
  auto& backend = *static_cast<PcSamplingBackend*>(self);
  const auto* call = static_cast<const CUpti_CallbackData*>(data);
  if (call->callbackSite != CUPTI_API_ENTER || call->symbolName == nullptr) return;
  std::lock_guard lock(backend.mutex_);
  if (backend.pass_ != 1 || backend.region_ < 0) return;
  backend.launches_.at(static_cast<std::size_t>(backend.region_)).push_back(call->symbolName);
}

void PcSamplingBackend::region_begin(const RegionContext& region) {
  {
    std::lock_guard lock(mutex_);
    pass_ = region.run.pass;
    region_ = static_cast<std::ptrdiff_t>(region.index);
    if (region.run.pass == 1) {
      if (region.index == 0) {  // a new run
        launches_.clear();
        run_samples_.clear();
      }
      launches_.resize(std::max(launches_.size(), region.index + 1));
      run_samples_.resize(std::max(run_samples_.size(), region.index + 1));
    }
  }
  if (!region.run.recorded) return;
  recorded_batch_ = true;
  // Sampling starts on an idle GPU, so that a range holds its region's kernels only.
  if (region.run.pass == 1) {
    device_.synchronize();
    pcs_->start();
    sampling_region_ = true;
  } else if (sass_) {
    device_.synchronize();
    try {
      sass_->start();
      counting_region_ = true;
    } catch (const Error& e) {
      without_sass_counts(e);
    }
  }
}

void PcSamplingBackend::region_end(const RegionContext& region) {
  {
    std::lock_guard lock(mutex_);
    region_ = -1;
  }
  if (sampling_region_) {
    sampling_region_ = false;
    device_.synchronize();
    pcs_->stop();
    fold(pcs_->drain(), region);
  }
  if (counting_region_) {
    counting_region_ = false;
    device_.synchronize();
    try {
      fold(sass_->stop(), region);
    } catch (const Error& e) {
      without_sass_counts(e);
    }
  }
}

std::string PcSamplingBackend::kernel_of(const std::string& function, const std::vector<std::string>& launched) {
  if (std::find(launched.begin(), launched.end(), function) != launched.end()) return function;
  // A device function the compiler did not inline: its region's one kernel called it.
  const std::vector<std::string> kernels = distinct(launched);
  return kernels.size() == 1 ? kernels.front() : function;
}

void PcSamplingBackend::fold(const pcsampling::RangeSamples& range, const RegionContext& region) {
  std::vector<std::string> launched;
  {
    std::lock_guard lock(mutex_);
    launched = launches_.at(region.index);
  }
  std::map<std::string, std::uint64_t>& samples = run_samples_.at(region.index);
  for (const auto& name : distinct(launched)) samples.try_emplace(name, 0);
  for (const std::string& name : launched) ++kernels_[{region.name, region.run.config, name}].launches;
  for (const pcsampling::PcRecord& r : range.records) {
    const std::string kernel = kernel_of(r.function, launched);
    Instruction& in = instructions_[{region.name, region.run.config, kernel, r.function, r.pc_offset}];
    in.crc = r.cubin_crc;
    std::uint64_t n = 0;
    for (const auto& [reason, count] : r.stalls) {
      in.stalls[reason] += count;
      n += count;
    }
    samples[kernel] += n;
    kernels_[{region.name, region.run.config, kernel}].samples += n;
  }
  if (range.dropped > 0)
    for (const auto& [name, n] : samples) kernels_[{region.name, region.run.config, name}].dropped += range.dropped;
  if (range.buffer_full)
    notes_.insert("CUPTI's sample buffer filled in annotation '" + region.name +
                  "': some samples were lost; sample less often (a larger sampling period)");
}

void PcSamplingBackend::fold(const std::vector<pcsampling::SassCount>& counts, const RegionContext& region) {
  std::vector<std::string> launched;
  {
    std::lock_guard lock(mutex_);
    launched = launches_.at(region.index);
  }
  for (const pcsampling::SassCount& c : counts) {
    Instruction& in = instructions_[{region.name, region.run.config, kernel_of(c.function, launched), c.function, c.pc_offset}];
    in.executed = in.executed.value_or(0) + c.executed;
    in.thread_executed = in.thread_executed.value_or(0) + c.thread_executed;
  }
}

void PcSamplingBackend::end_run(const RunContext&, const std::vector<RegionRecord>& regions) {
  region_count_ = regions.size();
}

bool PcSamplingBackend::another_pass_needed() {
  std::lock_guard lock(mutex_);
  if (pass_ == 1 && sass_ && recorded_batch_) return true;
  pass_ = 1;
  return false;
}

std::vector<RunMeasurement> PcSamplingBackend::collect_batch() {
  RunMeasurement measured(region_count_);
  std::lock_guard lock(mutex_);
  for (std::size_t r = 0; r < region_count_ && r < launches_.size(); ++r) {
    std::vector<std::string> kernels = distinct(launches_[r]);
    if (r < run_samples_.size())
      for (const auto& [name, n] : run_samples_[r])
        if (std::find(kernels.begin(), kernels.end(), name) == kernels.end()) kernels.push_back(name);
    for (const auto& name : kernels) {
      std::uint64_t n = 0;
      if (r < run_samples_.size())
        if (const auto found = run_samples_[r].find(name); found != run_samples_[r].end()) n = found->second;
      measured[r].push_back({names_.of(name), {static_cast<double>(n)}});
    }
  }
  pass_ = 1;
  recorded_batch_ = false;
  return {measured};
}

void PcSamplingBackend::abandon_run(const RunContext&) noexcept {
  try {
    if (sampling_region_) {
      sampling_region_ = false;
      device_.synchronize();
      pcs_->stop();
      pcs_->drain();  // the failed run's samples are not kept
    }
    if (counting_region_) {
      counting_region_ = false;
      device_.synchronize();
      sass_->stop();
    }
  } catch (...) {  // the run already failed: its own error is the one reported
  }
  std::lock_guard lock(mutex_);
  region_ = -1;
}

SampledCode PcSamplingBackend::take_samples() {
  SampledCode out;
  std::map<std::string, std::uint64_t> crc_of;  // a function's cubin, from its sampled instructions
  for (const auto& [key, in] : instructions_)
    if (in.crc != 0) crc_of.try_emplace(std::get<3>(key), in.crc);
  pcsampling::CubinStore& cubins = pcsampling::CubinStore::process();
  for (const auto& [key, in] : instructions_) {
    const auto& [annotation, config, kernel, function, pc] = key;
    SampledInstruction s;
    s.annotation = annotation;
    s.config_index = config;
    s.kernel = names_.of(kernel);
    s.function = names_.of(function);
    s.pc_offset = pc;
    const auto crc = crc_of.find(function);
    if (crc != crc_of.end()) {
      std::string why_lines, why_sass;
      s.source = cubins.source(crc->second, function, pc, why_lines);
      s.sass = cubins.sass(crc->second, function, pc, why_sass);
      if (!why_lines.empty()) notes_.insert(s.function + ": " + why_lines);
      if (!why_sass.empty()) notes_.insert(why_sass);
    }
    for (const auto& [reason, n] : in.stalls) s.stalls.emplace_back(reason, n);
    s.executed = in.executed;
    s.thread_executed = in.thread_executed;
    out.sass_metrics = out.sass_metrics || in.executed.has_value();
    out.instructions.push_back(std::move(s));
  }
  for (const auto& [key, k] : kernels_) {
    const auto& [annotation, config, kernel] = key;
    out.kernels.push_back({annotation, config, names_.of(kernel), k.samples, k.dropped, k.launches, sampling_.period_log2, ""});
  }
  out.notes.assign(notes_.begin(), notes_.end());
  instructions_.clear();
  kernels_.clear();
  notes_.clear();
  return out;
}

}  // namespace kscope

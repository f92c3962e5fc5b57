#pragma once
// The pcsampling backend: CUPTI's PC sampling around each region of the recorded runs (continuous
// collection, so kernels run concurrently as they would; started and stopped at the region's edges,
// its records drained after each stop), the launches of each region from CUPTI's launch callbacks,
// the cubins from its module-loaded callbacks. Its metric is the samples of each kernel per run; as
// kscope/lines.hpp's PcSampler it gives them per instruction, attributed to source lines
// (cubin_lines.hpp), with SASS text (nvdisasm) and, in a second pass of each run, the SASS metrics'
// executed instructions.
#include <cupti.h>

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "backends/pcsampling/context_sampling.hpp"
#include "backends/pcsampling/sass_counts.hpp"
#include "core/model/kernel_names.hpp"
#include "device/cuda_device.hpp"
#include "kscope/errors.hpp"
#include "kscope/lines.hpp"
#include "kscope/measurement_backend.hpp"

namespace kscope {

class PcSamplingBackend final : public MeasurementBackend, public PcSampler {
 public:
  explicit PcSamplingBackend(const Settings& settings);
  ~PcSamplingBackend() override;

  std::vector<MetricSpec> metrics() const override;
  SessionInfo describe() const override;
  DeviceControl* device_control() override { return &device_.control(); }
  PcSampler* pc_sampler() override { return this; }

  void begin_session(const Settings& settings) override;
  void end_session() noexcept override;
  void flush_cache() override;
  void synchronize() override { device_.synchronize(); }
  void region_begin(const RegionContext& region) override;
  void region_end(const RegionContext& region) override;
  void end_run(const RunContext& run, const std::vector<RegionRecord>& regions) override;
  bool another_pass_needed() override;
  std::vector<RunMeasurement> collect_batch() override;
  void abandon_run(const RunContext& run) noexcept override;

  void sample_pcs(const LineSampling& sampling) override;
  SampledCode take_samples() override;

 private:
  // Where an instruction's samples go: annotation, config, launched kernel, function and offset (symbols mangled).
  using InstructionKey = std::tuple<std::string, std::size_t, std::string, std::string, std::uint64_t>;
  struct Instruction {
    std::uint64_t crc = 0;
    std::map<std::string, std::uint64_t> stalls;
    std::optional<std::uint64_t> executed, thread_executed;
  };
  using KernelKey = std::tuple<std::string, std::size_t, std::string>;  // annotation, config, kernel (mangled)
  struct Kernel {
    std::uint64_t samples = 0, dropped = 0;
    std::size_t launches = 0;
  };

  static void CUPTIAPI on_callback(void* self, CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* data);
  void enable_callbacks();
  void disable_callbacks() noexcept;
  // The kernel a record of `function` in a region that launched `launched` belongs to.
  static std::string kernel_of(const std::string& function, const std::vector<std::string>& launched);
  void fold(const pcsampling::RangeSamples& range, const RegionContext& region);
  void fold(const std::vector<pcsampling::SassCount>& counts, const RegionContext& region);
  // The SASS metrics failed: said once, and the session goes on with the samples alone (no counts of
  // its earlier runs either).
  void without_sass_counts(const Error& e);

  device::MeasuredDevice device_;
  LineSampling sampling_;  // as sample_pcs() set it; kscope's default otherwise
  CUcontext context_ = nullptr;
  std::unique_ptr<pcsampling::ContextSampling> pcs_;
  std::unique_ptr<pcsampling::SassCounter> sass_;
  CUpti_SubscriberHandle subscriber_ = nullptr;
  KernelNames names_;

  std::mutex mutex_;  // launches_ and region_: written by the threads that launch
  std::ptrdiff_t region_ = -1;  // the open region's index in the run, -1 outside
  std::vector<std::vector<std::string>> launches_;  // per region index of the run: launched kernels (mangled)
  bool sampling_region_ = false;  // a range is started
  bool counting_region_ = false;  // SASS counts are on
  std::size_t pass_ = 1;
  bool recorded_batch_ = false;  // the batch has recorded runs: worth a SASS metrics pass
  std::vector<std::map<std::string, std::uint64_t>> run_samples_;  // per region: samples per kernel (mangled)
  std::size_t region_count_ = 0;

  std::map<InstructionKey, Instruction> instructions_;
  std::map<KernelKey, Kernel> kernels_;
  std::set<std::string> notes_;
};

}  // namespace kscope

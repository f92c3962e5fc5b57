// Would restoring a body's inputs between replay passes be affordable? Since issue 14 the counter
// backend replays a batch pass-major, so a body that changes its own inputs (x.mul_(2)) has changed
// them `runs` times before pass 2 starts. CUPTI's checkpoint API (cupti_checkpoint.h: save once
// before pass 1, restore before every later pass) could undo that; this measures its cost against
// a pass's, and whether it leaves the range profiler's values alone:
//   PASS <metrics> <passes> <ms per pass>
//       the range profiler's own cost per pass (start, one 16 MiB copy, stop), no checkpoint
//   CHECKPOINT <MiB allocated> <save ms> <restore ms> <free ms> <restored>
//       with that much device memory allocated beside kscope's own; restore: the median of 5;
//       restored: the buffer, overwritten after the save, read back as it was saved
//   REPLAY <MiB allocated> <passes> <ms per pass> <values>
//       the same replay with a restore before every pass after the first; values: "same" when
//       every metric is within 5% of the replay without restores (dram bytes, duration), else both
// Needs counter permission; exits 2, saying why, without a GPU.
#include <cupti_checkpoint.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

#include "backends/counters/driver_api.hpp"
#include "backends/counters/profiler_host.hpp"
#include "backends/counters/range_profiler.hpp"
#include "gpu_test_support.hpp"
#include "kscope/statistics.hpp"

namespace {

using Clock = std::chrono::steady_clock;
using NV::Cupti::Checkpoint::CUpti_Checkpoint;
namespace counters = kscope::counters;

constexpr std::size_t kFloats = std::size_t(1) << 22;  // the pass's copy: 16 MiB each way
const std::vector<std::string> kMetrics{"gpu__time_duration.sum", "dram__bytes_read.sum",
                                        "sm__throughput.avg.pct_of_peak_sustained_elapsed",
                                        "dram__throughput.avg.pct_of_peak_sustained_elapsed",
                                        "lts__t_sector_hit_rate.pct"};
constexpr std::size_t kMiB = std::size_t(1) << 20;

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

void check_cupti(CUptiResult status, const char* call) {
  if (status == CUPTI_SUCCESS) return;
  const char* text = nullptr;
  cuptiGetResultString(status, &text);
  throw std::runtime_error(std::string(call) + " failed: " + (text ? text : "unknown CUPTI error"));
}

class Checkpoint {
 public:
  explicit Checkpoint(CUcontext context) {
    handle_.structSize = CUpti_Checkpoint_STRUCT_SIZE;
    handle_.ctx = context;
  }
  ~Checkpoint() {
    if (saved_) NV::Cupti::Checkpoint::cuptiCheckpointFree(&handle_);
  }
  Checkpoint(const Checkpoint&) = delete;
  Checkpoint& operator=(const Checkpoint&) = delete;
  void save() {
    check_cupti(NV::Cupti::Checkpoint::cuptiCheckpointSave(&handle_), "cuptiCheckpointSave");
    saved_ = true;
  }
  void restore() { check_cupti(NV::Cupti::Checkpoint::cuptiCheckpointRestore(&handle_), "cuptiCheckpointRestore"); }
  void free() {
    check_cupti(NV::Cupti::Checkpoint::cuptiCheckpointFree(&handle_), "cuptiCheckpointFree");
    saved_ = false;
  }

 private:
  CUpti_Checkpoint handle_{};
  bool saved_ = false;
};

class DeviceBytes {
 public:
  explicit DeviceBytes(std::size_t bytes) : bytes_(bytes) {
    kscope_test::check(cudaMalloc(&data_, bytes), "cudaMalloc");
  }
  ~DeviceBytes() { cudaFree(data_); }
  DeviceBytes(const DeviceBytes&) = delete;
  DeviceBytes& operator=(const DeviceBytes&) = delete;
  void fill(int value) {
    kscope_test::check(cudaMemset(data_, value, bytes_), "cudaMemset");
    kscope_test::check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  }
  // Whether the first and the last byte hold `value`.
  bool holds(int value) const {
    unsigned char ends[2];
    kscope_test::check(cudaMemcpy(&ends[0], data_, 1, cudaMemcpyDeviceToHost), "cudaMemcpy");
    kscope_test::check(cudaMemcpy(&ends[1], static_cast<char*>(data_) + bytes_ - 1, 1, cudaMemcpyDeviceToHost),
                       "cudaMemcpy");
    return ends[0] == value && ends[1] == value;
  }

 private:
  void* data_ = nullptr;
  std::size_t bytes_;
};

const std::size_t kSizesMiB[] = {1, 16, 256, 1024};

struct Replay {
  std::size_t passes = 0;
  double ms_per_pass = 0;
  std::vector<double> values;  // per metric, of the one copy
};

// One batch of one copy through the range profiler; with a checkpoint, it is saved before the
// first pass and restored before each later one.
Replay replay(counters::RangeProfiler& profiler, const float* in, float* out, Checkpoint* checkpoint) {
  Replay r;
  profiler.begin_batch(1);
  if (checkpoint) checkpoint->save();
  const auto start = Clock::now();
  for (bool more = true; more; ++r.passes) {
    if (checkpoint && r.passes > 0) checkpoint->restore();
    profiler.start();
    kscope_test::launch_copy(in, out, kFloats);
    more = !profiler.stop();
  }
  r.ms_per_pass = ms_since(start) / static_cast<double>(r.passes);
  const auto ranges = profiler.decode();
  if (ranges.size() != 1) throw std::runtime_error("expected one range, got " + std::to_string(ranges.size()));
  r.values = ranges.front().values;
  if (checkpoint) checkpoint->free();
  return r;
}

bool same_values(const std::vector<double>& a, const std::vector<double>& b) {
  for (std::size_t i = 0; i < a.size(); ++i)
    if (!(std::fabs(a[i] - b[i]) <= 0.05 * std::fabs(b[i]))) return false;
  return a.size() == b.size();
}

std::string joined(const std::vector<double>& values) {
  std::string out;
  char buf[32];
  for (double v : values) {
    std::snprintf(buf, sizeof buf, "%s%.4g", out.empty() ? "" : ",", v);
    out += buf;
  }
  return out;
}

}  // namespace

int main() {
  if (kscope_test::report_no_gpu()) return 2;
  try {
    kscope_test::DeviceFloats in(kFloats), out(kFloats);
    const CUcontext context = counters::current_context();
    // The checkpoint alone first, before any range profiler is enabled on the context.
    std::printf("# CHECKPOINT MiB save_ms restore_ms free_ms restored | REPLAY MiB passes ms_per_pass values\n");
    for (std::size_t mib : kSizesMiB) {
      DeviceBytes inputs(mib * kMiB);
      inputs.fill(0x11);
      Checkpoint checkpoint(context);
      auto t = Clock::now();
      checkpoint.save();
      const double save_ms = ms_since(t);
      std::vector<double> restore_ms;
      bool restored = true;
      for (int i = 0; i < 5; ++i) {
        inputs.fill(0x22);
        t = Clock::now();
        checkpoint.restore();
        kscope_test::check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
        restore_ms.push_back(ms_since(t));
        restored = restored && inputs.holds(0x11);
      }
      t = Clock::now();
      checkpoint.free();
      const double free_ms = ms_since(t);
      std::printf("CHECKPOINT %zu %.3f %.3f %.3f %s\n", mib, save_ms, kscope::summarize(restore_ms, 0).median, free_ms,
                  restored ? "yes" : "NO");
    }
    // Then the profiler's passes with a restore before each later pass, where CUPTI allows both.
    const std::string chip = counters::chip_of_device(0);
    const auto config = std::make_shared<const counters::MetricConfig>(chip, kMetrics, counters::counter_availability(context));
    counters::RangeProfiler profiler(context, config, counters::RangeKind::per_kernel, 16);
    replay(profiler, in.get(), out.get(), nullptr);  // the range profiler's first start, once
    const Replay plain = replay(profiler, in.get(), out.get(), nullptr);
    std::printf("PASS %zu %zu %.3f\n", kMetrics.size(), plain.passes, plain.ms_per_pass);
    for (std::size_t mib : kSizesMiB) {
      DeviceBytes inputs(mib * kMiB);
      Checkpoint checkpoint(context);
      try {
        const Replay restoring = replay(profiler, in.get(), out.get(), &checkpoint);
        const bool same = same_values(restoring.values, plain.values);
        std::printf("REPLAY %zu %zu %.3f %s\n", mib, restoring.passes, restoring.ms_per_pass,
                    same ? "same" : ("DIFFERENT: " + joined(restoring.values) + " vs " + joined(plain.values)).c_str());
      } catch (const std::exception& e) {
        std::printf("REPLAY %zu refused: %s\n", mib, e.what());
        return 1;  // the profiler is poisoned after a failure: nothing later would measure
      }
    }
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "checkpoint_cost: %s\n", e.what());
    return 1;
  }
}

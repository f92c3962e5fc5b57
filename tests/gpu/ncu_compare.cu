// Kernels of 20 us and more, for comparing kscope's cupti durations with ncu's
// gpu__time_duration.sum (scripts/gpu_check.sh drives it):
//   ncu_compare --measure     profiles them with kscope (cupti, cache_control all) and prints
//                             "KSCOPE <label> <median ns>" per kernel;
//   ncu_compare --plain REPS  just launches each kernel REPS times, in the same label order, to
//                             run under ncu.
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "gpu_test_support.hpp"
#include "kscope/kscope.hpp"

namespace {

// 1 GiB and 128 MiB each way. The 128 MiB copy (~65 us) is where an L2 flush that left dirty
// lines showed: the kernel wrote up to an L2 of them back (ncu's flush leaves none).
constexpr std::size_t kCopyFloats = std::size_t(1) << 28;
constexpr std::size_t kMidCopyFloats = std::size_t(1) << 25;

struct Workload {
  std::string label;
  std::function<void()> launch;
};

std::vector<Workload> workloads(const kscope_test::DeviceFloats& in, kscope_test::DeviceFloats& out) {
  return {
      {"spin20", [] { kscope_test::launch_spin(20'000); }},
      {"spin50", [] { kscope_test::launch_spin(50'000); }},
      {"spin100", [] { kscope_test::launch_spin(100'000); }},
      {"copy128MiB", [&] { kscope_test::launch_copy(in.get(), out.get(), kMidCopyFloats); }},
      {"copy1GiB", [&] { kscope_test::launch_copy(in.get(), out.get(), kCopyFloats); }},
  };
}

int measure(const std::vector<Workload>& work) {
  std::vector<kscope::Value> labels;
  for (const auto& w : work) labels.emplace_back(w.label);
  kscope::Sweep sweep;
  sweep.axis("kernel", labels);
  kscope::Settings settings;
  settings.runs = 20;
  settings.cache_control = kscope::CacheControl::all;
  settings.verbosity = kscope::Verbosity::quiet;
  const auto results = kscope::profile(sweep, settings, [&](const kscope::Config& config) {
    kscope::Annotation region("kernel");
    work[config.index()].launch();
  });
  for (std::size_t c = 0; c < work.size(); ++c) {
    const auto& row = results.at("kernel", "cupti__kernel_duration", c);
    std::printf("KSCOPE %s %.1f %s\n", work[c].label.c_str(), row.stats.median, row.kernel.c_str());
  }
  return 0;
}

int plain(const std::vector<Workload>& work, int reps) {
  for (const auto& w : work) {
    for (int r = 0; r < reps; ++r) w.launch();
  }
  kscope_test::check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const auto with_workloads = [](const auto& use) {
    kscope_test::DeviceFloats in(kCopyFloats), out(kCopyFloats);
    return use(workloads(in, out));
  };
  return kscope_test::measure_or_plain(
      argc, argv, [&] { return with_workloads([](const auto& work) { return measure(work); }); },
      [&](int reps) { return with_workloads([&](const auto& work) { return plain(work, reps); }); });
}

// Line sampling's cost, and its lines against Nsight Compute's (scripts/lines_check.sh runs it):
//   lines_cost lines <kernel> <csv>       profile_lines on the kernel: each line's samples and share
//                                        to <csv>; prints the call's wall time
//   lines_cost plain <kernel>            the kernel launched 5 times and nothing else (ncu profiles this)
//   lines_cost overhead <kernel>         the kernel's GPU time (CUDA events) unsampled and sampled at
//                                        the default period, and their ratio
// <kernel>: chase, barrier or fma (lines_kernels.hpp).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <memory>
#include <string>
#include <vector>

#include "gpu_test_support.hpp"
#include "kscope/kscope.hpp"
#include "kscope/lines.hpp"
#include "lines_kernels.hpp"

namespace {

using namespace kscope_lines_test;

struct Kernel {
  std::string name;  // demangled
  std::function<void()> launch;
};

Kernel kernel_named(const std::string& which, const Chase& chase, float* scratch) {
  if (which == "chase") return {kChaseKernel, [&chase] { chase.launch(20000); }};
  if (which == "barrier") return {"kscope_lines_test::barrier_bound(float*, int)", [=] { launch_barrier_bound(scratch, 2000); }};
  if (which == "fma") return {kFmaKernel, [=] { launch_fma_chain(scratch, 50000); }};
  throw std::runtime_error("unknown kernel '" + which + "': chase, barrier or fma");
}

// GPU time of each launch, by CUDA events around it.
class EventTimer {
 public:
  EventTimer() {
    kscope_test::check(cudaEventCreate(&start_), "cudaEventCreate");
    kscope_test::check(cudaEventCreate(&stop_), "cudaEventCreate");
  }
  ~EventTimer() {
    cudaEventDestroy(start_);
    cudaEventDestroy(stop_);
  }
  double time_ms(const std::function<void()>& launch) {
    kscope_test::check(cudaEventRecord(start_), "cudaEventRecord");
    launch();
    kscope_test::check(cudaEventRecord(stop_), "cudaEventRecord");
    kscope_test::check(cudaEventSynchronize(stop_), "cudaEventSynchronize");
    float ms = 0;
    kscope_test::check(cudaEventElapsedTime(&ms, start_, stop_), "cudaEventElapsedTime");
    return ms;
  }

 private:
  cudaEvent_t start_ = nullptr, stop_ = nullptr;
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

kscope::Settings settings(std::size_t runs) {
  kscope::Settings s;
  s.runs = runs;
  s.warmup_runs = 1;
  s.verbosity = kscope::Verbosity::quiet;
  return s;
}

int lines(const Kernel& k, const std::string& csv) {
  const auto start = std::chrono::steady_clock::now();
  const kscope::LineResults r = kscope::profile_lines(kscope::Sweep(), settings(5), [&](const kscope::Config&) {
    kscope::Annotation region("k");
    k.launch();
  });
  const double wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const kscope::Table t = r.lines_table();
  // The kernel as the sampled rows name it: a name spelled otherwise than the demangler does would
  // leave both files empty and the comparison with nothing to compare.
  std::set<std::string> sampled;
  for (const auto& row : t.rows) sampled.insert(std::get<std::string>(row[t.column("Kernel")]));
  if (!sampled.contains(k.name)) {
    std::string names;
    for (const auto& n : sampled) names += (names.empty() ? "" : "; ") + n;
    std::fprintf(stderr, "lines_cost: no sampled lines of '%s'; the kernels sampled: %s\n", k.name.c_str(),
                 names.empty() ? "none" : names.c_str());
    return 1;
  }
  std::ofstream out(csv);
  out << "line,samples,share_pct,dominant\n";
  std::set<std::int64_t> seen;
  for (const auto& row : t.rows) {
    if (std::get<std::string>(row[t.column("Kernel")]) != k.name) continue;
    const auto* line = std::get_if<std::int64_t>(&row[t.column("Line")]);
    if (!line || !seen.insert(*line).second) continue;
    out << *line << "," << std::get<std::int64_t>(row[t.column("LineSamples")]) << ","
        << std::get<double>(row[t.column("LineSharePct")]) << "," << std::get<std::string>(row[t.column("StallReason")])
        << "\n";
  }
  // Where each instruction's code is: the comparison maps Nsight Compute's per-instruction samples with it.
  const kscope::Table raw = r.instructions_table();
  std::ofstream pcs(csv + ".pcs");
  pcs << "pc_offset,line\n";
  for (const auto& row : raw.rows)
    if (std::get<std::string>(row[raw.column("Kernel")]) == k.name)
      if (const auto* line = std::get_if<std::int64_t>(&row[raw.column("Line")]))
        pcs << std::get<std::int64_t>(row[raw.column("PcOffset")]) << "," << *line << "\n";
  std::printf("kscope_wall_s %.3f\n", wall_s);
  std::printf("%s\n", r.listing(5).c_str());
  return 0;
}

int plain(const Kernel& k) {
  for (int i = 0; i < 5; ++i) k.launch();
  kscope_test::check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  return 0;
}

int overhead(const Kernel& k) {
  EventTimer timer;
  k.launch();  // module load, first-launch costs
  std::vector<double> unsampled;
  for (int i = 0; i < 10; ++i) unsampled.push_back(timer.time_ms(k.launch));
  std::vector<double> sampled;
  kscope::LineSampling sampling;
  sampling.sass_metrics = false;  // its pass runs patched code, slower by design: timed here are the sampled runs
  kscope::profile_lines(kscope::Sweep(), settings(10), [&](const kscope::Config&) {
    kscope::Annotation region("k");
    sampled.push_back(timer.time_ms(k.launch));
  }, sampling);
  sampled.erase(sampled.begin());  // the warm-up run is not sampled
  const double a = median(unsampled), b = median(sampled);
  std::printf("unsampled_ms %.4f sampled_ms %.4f ratio %.3f\n", a, b, b / a);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (kscope_test::report_no_gpu()) return 0;
  if (argc < 3) {
    std::fprintf(stderr, "usage: lines_cost lines|plain|overhead chase|barrier|fma [csv]\n");
    return 64;
  }
  try {
    const Chase chase;
    kscope_test::DeviceFloats scratch(132 * 1024);
    const Kernel k = kernel_named(argv[2], chase, scratch.get());
    const std::string mode = argv[1];
    if (mode == "lines" && argc == 4) return lines(k, argv[3]);
    if (mode == "plain") return plain(k);
    if (mode == "overhead") return overhead(k);
    std::fprintf(stderr, "unknown mode %s\n", mode.c_str());
    return 64;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "lines_cost: %s\n", e.what());
    return 1;
  }
}

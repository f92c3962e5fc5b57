// kscope's own cost as a sweep grows, from 10^3 to 10^7 samples (configs x runs): memory per
// sample, the cost of streaming to an output prefix, and the overhead per config. It runs on the
// simulated backend, so no GPU and nothing but kscope's code is measured: the body opens one
// annotation and "launches" one kernel per run.
//
// Each shape is measured twice, each time in a fresh child process (so that one measurement's
// heap does not serve the next): without and with Settings::output_prefix (files in a scratch
// directory under $TMPDIR, removed afterwards). Printed per shape:
//   peak B/sample   (the peak RSS of the child during profile(), less its RSS before) / samples;
//                   the Results are alive at the end, so this is what the sweep holds plus its
//                   transient peak
//   held B/sample   the heap in use after profile() (mallinfo2) less before, / samples: what the
//                   Results keep
//   stream us/sample (wall with output_prefix - wall without) / samples: files, fdatasync, writers
//   us/config       wall without output_prefix / configs (runs = 1: all of it is kscope's per-config
//                   cost; otherwise it includes the runs)
//   us/run          wall without output_prefix / samples
// Targets (issue 29): peak and held <= 64 B per sample (with output_prefix too), streaming
// <= 1 us per sample, overhead <= 50 us per config (checked on the 1-run shapes, where it is the
// whole cost). Each is printed with met / missed.
//
// Usage: kscope_scale [--max-samples N] [--only CONFIGSxRUNS] [--group-commit-ms MS]
// 10^7 samples need about 1 GB of memory and 5 GB of scratch disk and take a few minutes.
#include <malloc.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "kscope/annotation.hpp"
#include "kscope/profile.hpp"
#include "kscope/testing.hpp"

namespace {

struct Shape {
  std::size_t configs, runs;
  std::size_t samples() const { return configs * runs; }
  std::string name() const { return std::to_string(configs) + "x" + std::to_string(runs); }
};

struct Measured {
  bool ok = false;
  double wall_s = 0;
  double peak_bytes = 0;  // VmHWM during profile() less VmRSS before it
  double held_bytes = 0;  // heap in use after, less before
  char error[256] = {};
};

// A /proc/self/status field in bytes ("VmRSS", "VmHWM").
double status_bytes(const char* field) {
  std::ifstream in("/proc/self/status");
  const std::string key = std::string(field) + ":";
  for (std::string line; std::getline(in, line);)
    if (line.rfind(key, 0) == 0) return std::stod(line.substr(key.size())) * 1024.0;
  return 0;
}

void reset_peak_rss() {
  std::ofstream clear("/proc/self/clear_refs");
  clear << "5";  // resets VmHWM to the current RSS (Linux >= 4.0)
}

double heap_in_use() { return static_cast<double>(mallinfo2().uordblks + mallinfo2().hblkhd); }

kscope::Sweep sweep_of(std::size_t configs) {
  std::vector<kscope::Value> n;
  n.reserve(configs);
  for (std::size_t i = 0; i < configs; ++i) n.push_back(static_cast<long long>(1024 + i));
  return kscope::Sweep().axis("n", n).axis("dtype", {"f32"});
}

Measured measure(const Shape& shape, const std::string& prefix, double group_commit_ms) {
  Measured m;
  try {
    const kscope::Sweep sweep = sweep_of(shape.configs);
    kscope::testing::SimulatedBackend backend;
    kscope::Settings settings;
    settings.runs = shape.runs;
    settings.warmup_runs = 0;
    settings.verbosity = kscope::Verbosity::quiet;
    settings.output_prefix = prefix;
    (void)group_commit_ms;
    std::size_t call = 0;
    const kscope::Body body = [&](const kscope::Config&) {
      kscope::Annotation a("kernel");
      backend.launch("add_kernel", 1000.0 + static_cast<double>(call++ % 7));
    };
    malloc_trim(0);
    const double heap_before = heap_in_use();
    const double rss_before = status_bytes("VmRSS");
    reset_peak_rss();
    const auto start = std::chrono::steady_clock::now();
    const kscope::Results results = kscope::profile_with_backend(sweep, settings, body, backend);
    m.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    m.peak_bytes = status_bytes("VmHWM") - rss_before;
    m.held_bytes = heap_in_use() - heap_before;
    if (results.samples().size() != shape.samples())
      throw std::runtime_error("expected " + std::to_string(shape.samples()) + " samples, got " +
                               std::to_string(results.samples().size()));
    m.ok = true;
  } catch (const std::exception& e) {
    std::snprintf(m.error, sizeof m.error, "%s", e.what());
  }
  return m;
}

// The measurement in a child process: its own heap and peak RSS.
Measured measure_in_child(const Shape& shape, bool stream, double group_commit_ms) {
  std::string directory;
  if (stream) {
    const char* tmp = std::getenv("TMPDIR");
    std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/kscope_scale_XXXXXX";
    if (!mkdtemp(pattern.data())) return {};
    directory = pattern;
  }
  int pipe_fds[2];
  if (pipe(pipe_fds) != 0) return {};
  std::fflush(nullptr);
  const pid_t child = fork();
  if (child == 0) {
    close(pipe_fds[0]);
    const Measured m = measure(shape, stream ? directory + "/sweep_" : "", group_commit_ms);
    const ssize_t written = write(pipe_fds[1], &m, sizeof m);
    _exit(written == static_cast<ssize_t>(sizeof m) ? 0 : 1);
  }
  close(pipe_fds[1]);
  Measured m;
  const ssize_t got = read(pipe_fds[0], &m, sizeof m);
  close(pipe_fds[0]);
  int status = 0;
  waitpid(child, &status, 0);
  if (!directory.empty()) std::filesystem::remove_all(directory);
  if (got != static_cast<ssize_t>(sizeof m)) {
    Measured failed;
    std::snprintf(failed.error, sizeof failed.error, "the child process died (status %d)", status);
    return failed;
  }
  return m;
}

const char* verdict(bool met) { return met ? "met" : "MISSED"; }

}  // namespace

int main(int argc, char** argv) {
  std::size_t max_samples = 10'000'000;
  std::string only;
  double group_commit_ms = 0;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--max-samples" && i + 1 < argc) max_samples = std::stoull(argv[++i]);
    else if (arg == "--only" && i + 1 < argc) only = argv[++i];
    else if (arg == "--group-commit-ms" && i + 1 < argc) group_commit_ms = std::stod(argv[++i]);
    else {
      std::fprintf(stderr, "usage: %s [--max-samples N] [--only CONFIGSxRUNS] [--group-commit-ms MS]\n", argv[0]);
      return 2;
    }
  }
  const std::vector<Shape> shapes{
      {1'000, 1},   {10, 100},   {10'000, 1},  {10, 1'000},  {20'000, 1}, {100'000, 1}, {1'000, 100},
      {10'000, 100}, {1'000, 1'000}, {100, 10'000}, {1'000'000, 1}, {1'000, 10'000}, {100'000, 100},
  };
  constexpr double kBytesPerSample = 64, kStreamUs = 1, kConfigUs = 50;
  std::printf("kscope scale: simulated backend, 1 annotation and 1 metric per run, no warm-up; targets: "
              "<= %.0f B per sample (peak and held, with and without output_prefix), streaming <= %.0f us per "
              "sample, <= %.0f us per config\n",
              kBytesPerSample, kStreamUs, kConfigUs);
  std::printf("%-13s %9s | %10s %10s | %10s %10s | %12s | %10s %8s | %s\n", "configsxruns", "samples", "peak B/s",
              "held B/s", "+out peak", "+out held", "stream us/s", "us/config", "us/run", "targets");
  bool all_met = true;
  for (const Shape& shape : shapes) {
    if (shape.samples() > max_samples || (!only.empty() && only != shape.name())) continue;
    const Measured plain = measure_in_child(shape, false, group_commit_ms);
    const Measured streamed = measure_in_child(shape, true, group_commit_ms);
    if (!plain.ok || !streamed.ok) {
      std::printf("%-13s failed: %s\n", shape.name().c_str(), plain.ok ? streamed.error : plain.error);
      all_met = false;
      continue;
    }
    const double n = static_cast<double>(shape.samples());
    const double peak = plain.peak_bytes / n, held = plain.held_bytes / n;
    const double out_peak = streamed.peak_bytes / n, out_held = streamed.held_bytes / n;
    const double stream_us = (streamed.wall_s - plain.wall_s) / n * 1e6;
    const double config_us = plain.wall_s / static_cast<double>(shape.configs) * 1e6;
    const bool memory_met = std::max({peak, held, out_peak, out_held}) <= kBytesPerSample;
    const bool stream_met = stream_us <= kStreamUs;
    const bool config_met = shape.runs > 1 || config_us <= kConfigUs;
    all_met = all_met && memory_met && stream_met && config_met;
    std::printf("%-13s %9zu | %10.1f %10.1f | %10.1f %10.1f | %12.3f | %10.2f %8.3f | memory %s, streaming %s%s\n",
                shape.name().c_str(), shape.samples(), peak, held, out_peak, out_held, stream_us, config_us,
                plain.wall_s / n * 1e6, verdict(memory_met), verdict(stream_met),
                shape.runs == 1 ? (std::string(", per config ") + verdict(config_met)).c_str() : "");
    std::fflush(stdout);
  }
  std::printf("%s\n", all_met ? "all targets met" : "some targets MISSED");
  return all_met ? 0 : 1;
}

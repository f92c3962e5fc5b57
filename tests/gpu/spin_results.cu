// Saved results of known kernels, for `kscope compare` on real measurements
// (scripts/compare_check.sh):
//   spin_results OUT.json SCALE [RUNS]
// profiles, RUNS recorded runs each (default 30; backend cupti, cache_control all), the kernels of
// the config axis "kernel": spin20 and spin50 (kscope_test::launch_spin of SCALE x 20 us and
// SCALE x 50 us) and copy64MiB (a copy of SCALE x 64 MiB, DRAM-bound with the L2 flushed), and
// writes OUT.json with Results::write_json. The axis names the nominal kernel, so results of
// different scales match row by row. A spin lasts its %globaltimer length whatever the clocks; the
// copy shows the session-to-session noise of a memory-bound kernel.
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <iostream>

#include "gpu_test_support.hpp"
#include "kscope/kscope.hpp"

namespace {

constexpr std::size_t kCopyFloats = std::size_t(64) << 20 >> 2;  // 64 MiB

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3 || argc > 4) {
    std::fprintf(stderr, "usage: spin_results OUT.json SCALE [RUNS]\n");
    return 64;
  }
  const double scale = std::atof(argv[2]);
  const long runs = argc == 4 ? std::atol(argv[3]) : 30;
  if (!(scale > 0 && scale < 4) || runs < 1) {
    std::fprintf(stderr, "spin_results: SCALE must be a number above 0 and below 4, RUNS a positive integer\n");
    return 64;
  }
  if (kscope_test::report_no_gpu()) return 2;
  try {
    const std::size_t copy_floats = static_cast<std::size_t>(scale * kCopyFloats) / 4 * 4;
    const kscope_test::DeviceFloats in(copy_floats);
    kscope_test::DeviceFloats out(copy_floats);
    kscope::Settings settings;
    settings.runs = static_cast<std::size_t>(runs);
    settings.verbosity = kscope::Verbosity::quiet;
    const auto results = kscope::profile(
        kscope::Sweep().axis("kernel", {"spin20", "spin50", "copy64MiB"}), settings, [&](const kscope::Config& c) {
          const std::string kernel = c.get<std::string>("kernel");
          kscope::Annotation region(kernel.substr(0, 4));  // "spin" or "copy"
          if (kernel == "copy64MiB") kscope_test::launch_copy(in.get(), out.get(), copy_floats);
          else kscope_test::launch_spin(static_cast<std::uint64_t>(scale * (kernel == "spin20" ? 20'000 : 50'000)));
        });
    std::cout << results;
    results.write_json(argv[1]);
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "spin_results: %s\n", e.what());
    return 1;
  }
}

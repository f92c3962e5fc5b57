// A user's CI test without a GPU, against the installed package: the program's sweep, body and
// derived metric run on kscope's simulated backend (kscope::testing), whose "kernels" last what the
// test says. Exits 1 with the reason when a number is not the one the sweep must produce.
#include <cstdlib>
#include <iostream>
#include <string>

#include <kscope/kscope.hpp>
#include <kscope/testing.hpp>

int main() {
  kscope::testing::SimulatedBackend gpu;
  kscope::Settings settings;
  settings.runs = 4;
  settings.verbosity = kscope::Verbosity::quiet;
  settings.derive_metric = [](const kscope::MeasuredValues& m, const kscope::Config& c) {
    const double bytes = 8.0 * static_cast<double>(c.get<std::int64_t>("n"));
    return std::vector<kscope::DerivedValue>{{"bandwidth", bytes / m.front(), "GB/s"}};
  };
  const auto sweep = kscope::Sweep().axis("n", {1000, 2000});
  const kscope::Results results = kscope::profile_with_backend(sweep, settings, [&](const kscope::Config& c) {
    kscope::Annotation region("copy");
    gpu.launch("copy_kernel", static_cast<double>(c.get<std::int64_t>("n")));  // 1 ns per element
  }, gpu);
  std::cout << results;
  const double bandwidth = results.at("copy", "bandwidth", 1).avg_value;
  if (results.rows().size() != 4 || bandwidth != 8.0) {
    std::cout << "FAIL: expected 4 rows and 8 GB/s at n=2000, got " << results.rows().size() << " rows and "
              << bandwidth << " GB/s\n";
    return EXIT_FAILURE;
  }
  std::cout << "simulated sweep: 4 rows, 8 GB/s as expected\n";
  return EXIT_SUCCESS;
}

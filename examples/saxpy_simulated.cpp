// The main example's sweep (saxpy_sweep.hpp) on kscope's simulated backend: no GPU, driver or CUDA
// toolkit needed, to see kscope's table on any machine (bash scripts/run_example.sh --simulated).
// Nothing is measured: each "kernel" lasts what a memory-bound saxpy would on a GPU of 3 TB/s
// (2.5 us to start, then its bytes at 3000 GB/s), with a 2% jitter, and the rows say
// "test (simulated)".
//
//   ./saxpy_simulated    prints the summary table
#include <cstdint>
#include <exception>
#include <iostream>

#include "kscope/kscope.hpp"
#include "kscope/testing.hpp"
#include "saxpy_sweep.hpp"

int main() {
  try {
    kscope::testing::SimulatedBackend gpu;
    kscope::testing::SimulatedNoise noise;
    noise.kernel.jitter_pct = 2;
    noise.kernel.clock_bound = 0;  // memory-bound: the SM clock does not change its duration
    noise.seed = 1;
    gpu.set_noise(noise);
    const kscope::Results results = kscope::profile_with_backend(
        saxpy_example::sweep(), saxpy_example::settings(),
        [&](const kscope::Config& c) {
          kscope::Annotation region("saxpy");
          gpu.launch(c.get<std::string>("dtype") == "f16" ? "saxpy<__half>" : "saxpy<float>",
                     2500.0 + saxpy_example::bytes_moved(c) / 3000.0);
        },
        gpu);
    std::cout << results;
    std::cout << "simulated: these durations are modelled, not measured (run it on a GPU: scripts/run_example.sh)\n";
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "saxpy_simulated: " << e.what() << "\n";
    return 1;
  }
}

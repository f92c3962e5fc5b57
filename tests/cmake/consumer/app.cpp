// Uses the installed kscope as a user's program would: a sweep, settings and profile(). Where a
// GPU measures, the events backend times each (empty) region; elsewhere profile() must refuse with
// a BackendError that says why: no GPU or driver (CudaError), or a kscope built without CUDA.
#include <iostream>
#include <string>

#include <kscope/kscope.hpp>

int main() {
  const auto sweep = kscope::Sweep().axis("n", {1 << 10, 1 << 20}).axis("dtype", {"f32", "f16"});
  std::cout << "sweep: " << sweep.configs().size() << " configs\n";
  kscope::Settings settings;
  settings.backend = kscope::Backend::events;  // needs no kernel in the region
  settings.runs = 3;
  try {
    const kscope::Results results = kscope::profile(sweep, settings, [](const kscope::Config&) {
      kscope::Annotation region("region");
    });
    std::cout << results;
    return 0;
  } catch (const kscope::BackendError& e) {
    const std::string kind = dynamic_cast<const kscope::CudaError*>(&e) ? "CudaError" : "BackendError";
    std::cout << "profile() refused with kscope::" << kind << ": " << e.what() << "\n";
    if (!KSCOPE_WITH_CUDA && std::string(e.what()).find("without CUDA") == std::string::npos) {
      std::cout << "FAIL: a kscope built without CUDA must say so\n";
      return 1;
    }
    return 0;
  }
}

// profile() for a kscope built without CUDA: the engine, tables and writers work, but nothing
// can measure a kernel.
#include "kscope/errors.hpp"
#include "kscope/profile.hpp"

namespace kscope {

Results profile(const Sweep&, const Settings&, const Body&) {
  throw BackendError(
      "kscope was built without CUDA (KSCOPE_ENABLE_CUDA=OFF), so it has no measurement backend: "
      "install the CUDA toolkit (nvcc, CUPTI) and reconfigure with -DKSCOPE_ENABLE_CUDA=ON");
}

}  // namespace kscope

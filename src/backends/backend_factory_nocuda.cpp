// The backend factory of a kscope built without CUDA: the engine, tables and writers work, but
// nothing can measure a kernel.
#include "core/backend_factory.hpp"
#include "kscope/errors.hpp"

namespace kscope {
namespace {

class NoCudaFactory final : public detail::BackendFactory {
 public:
  std::unique_ptr<detail::Route> route(const Sweep&, const Settings&, std::size_t) override { return nullptr; }

  std::unique_ptr<MeasurementBackend> make(const Settings&) override {
    throw BackendError(
        "kscope was built without CUDA (KSCOPE_ENABLE_CUDA=OFF), so it has no measurement backend: "
        "install the CUDA toolkit (nvcc, CUPTI) and reconfigure with -DKSCOPE_ENABLE_CUDA=ON");
  }
};

}  // namespace

detail::BackendFactory& detail::backend_factory() {
  static NoCudaFactory factory;
  return factory;
}

}  // namespace kscope

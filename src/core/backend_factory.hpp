#pragma once
// What profile() needs from the library that holds the backends: the CUDA build supplies the real
// backends and Nsight Compute's re-run; the build without CUDA a factory that says why nothing
// can measure. Core decides nothing about which backends exist.
#include <cstddef>
#include <memory>

#include "kscope/measurement_backend.hpp"
#include "kscope/profile.hpp"

namespace kscope::detail {

// A way of carrying out a profile() call other than measuring in this process.
class Route {
 public:
  virtual ~Route() = default;
  virtual Results profile(const Sweep& sweep, const Settings& settings, const Body& body) = 0;
};

class BackendFactory {
 public:
  virtual ~BackendFactory() = default;
  // The route of the process's profile() call number `call` (1-based), or nullptr to measure in
  // this process with make().
  virtual std::unique_ptr<Route> route(const Sweep& sweep, const Settings& settings, std::size_t call) = 0;
  // The backend Settings::backend names; throws BackendError (CudaError) saying why it cannot work.
  virtual std::unique_ptr<MeasurementBackend> make(const Settings& settings) = 0;
};

BackendFactory& backend_factory();

}  // namespace kscope::detail

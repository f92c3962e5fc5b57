#pragma once
// Builds the real measurement backend that Settings::backend names, on Settings::device.
#include <memory>

#include "kscope/measurement_backend.hpp"
#include "kscope/settings.hpp"

namespace kscope {

// Throws CudaError when no usable device exists and BackendError when the backend cannot run here.
std::unique_ptr<MeasurementBackend> make_backend(const Settings& settings);

}  // namespace kscope

#include "backends/ncu/error_kinds.hpp"

#include "kscope/errors.hpp"

namespace kscope::ncu {

std::string error_kind(std::exception_ptr error) {
  try {
    std::rethrow_exception(error);
  } catch (const SweepError&) {
    return "SweepError";
  } catch (const CudaError&) {
    return "CudaError";
  } catch (const BackendError&) {
    return "BackendError";
  } catch (const AnnotationUseError&) {
    return "AnnotationUseError";
  } catch (const KernelCountError&) {
    return "KernelCountError";
  } catch (const AnnotationError&) {
    return "AnnotationError";
  } catch (const ConfigError&) {
    return "ConfigError";
  } catch (const ThermalError&) {
    return "ThermalError";
  } catch (const InternalError&) {
    return "InternalError";
  } catch (const Error&) {
    return "Error";
  } catch (...) {
    return "exception";
  }
}

std::exception_ptr make_error(const std::string& kind, const std::string& message) {
  if (kind == "CudaError") return std::make_exception_ptr(CudaError(message));
  if (kind == "BackendError") return std::make_exception_ptr(BackendError(message));
  if (kind == "AnnotationUseError") return std::make_exception_ptr(AnnotationUseError(message));
  if (kind == "KernelCountError") return std::make_exception_ptr(KernelCountError(message));
  if (kind == "AnnotationError") return std::make_exception_ptr(AnnotationError(message));
  if (kind == "ConfigError") return std::make_exception_ptr(ConfigError(message));
  if (kind == "ThermalError") return std::make_exception_ptr(ThermalError(message));
  if (kind == "InternalError") return std::make_exception_ptr(InternalError(message));
  return std::make_exception_ptr(Error(message));
}

}  // namespace kscope::ncu

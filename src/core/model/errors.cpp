#include "kscope/errors.hpp"

#include "core/model/exception_message.hpp"
#include "kscope/results.hpp"

namespace kscope {

SweepError::SweepError(const std::string& message, std::string failed_config,
                       std::exception_ptr cause, std::shared_ptr<const Results> partial)
    : Error(message),
      failed_config_(std::move(failed_config)),
      cause_(std::move(cause)),
      partial_(std::move(partial)) {}

SweepInterrupted::SweepInterrupted(const std::string& message, std::string interrupted_config,
                                   std::shared_ptr<const Results> partial)
    : std::runtime_error(message), interrupted_config_(std::move(interrupted_config)), partial_(std::move(partial)) {}

namespace detail {

std::string exception_message(std::exception_ptr error) {
  try {
    std::rethrow_exception(error);
  } catch (const std::exception& e) {
    return e.what();
  } catch (...) {
    return "a non-standard exception";
  }
}

}  // namespace detail
}  // namespace kscope

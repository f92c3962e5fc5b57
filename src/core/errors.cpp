#include "kscope/errors.hpp"

#include "kscope/results.hpp"

namespace kscope {

SweepError::SweepError(const std::string& message, std::string failed_config,
                       std::exception_ptr cause, std::shared_ptr<const Results> partial)
    : Error(message),
      failed_config_(std::move(failed_config)),
      cause_(std::move(cause)),
      partial_(std::move(partial)) {}

}  // namespace kscope

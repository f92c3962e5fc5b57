#pragma once
// Every error kscope raises names the problem and the fix. SweepError (and SweepInterrupted, for
// Ctrl-C) carries what was measured before it, so nothing collected is lost.
#include <exception>
#include <memory>
#include <stdexcept>
#include <string>
#include <system_error>

namespace kscope {

class Results;

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Bad sweep, config access, settings or annotation use (detected before or while the body runs).
class ConfigError : public Error {
 public:
  using Error::Error;
};

// A region broke a rule: how it was used, or what it launched (the two classes below).
class AnnotationError : public Error {
 public:
  using Error::Error;
};

// An annotation used against the rules: opened while another is open (no nesting), its name
// repeated in one run, left open when the body returns, other regions opened in a replay pass, or
// with the energy metrics other than exactly one annotation in a run.
// Thrown where the annotation opens, so the body may catch it and go on (Python: also a ValueError).
class AnnotationUseError : public AnnotationError {
 public:
  using AnnotationError::AnnotationError;
};

// A region's kernels broke the one-kernel rule: none, several without combine_kernel_metrics, or
// other kernels in a replay pass than in the first (Python: also a RuntimeError).
class KernelCountError : public AnnotationError {
 public:
  using AnnotationError::AnnotationError;
};

// The backend could not be used here (no GPU, CUPTI owned by another profiler, ...).
class BackendError : public Error {
 public:
  using Error::Error;
};

// A CUDA runtime call failed.
class CudaError : public BackendError {
 public:
  using BackendError::BackendError;
};

// A kscope invariant failed: a bug in kscope (please report it with the message). Never a reason
// to measure another way: Backend::automatic does not fall back on it.
class InternalError : public Error {
 public:
  using Error::Error;
};

// A file could not be read or written: it does not exist, is a directory, is not permitted, or is
// something other than a regular file (a device, a FIFO) that kscope will not replace. path() is
// the file named; code() the operating system's reason (std::errc), empty when there is none.
class FileError : public Error {
 public:
  // The message, the file it names and the operating system's reason.
  FileError(const std::string& message, std::string path, std::error_code code = {});
  const std::string& path() const { return path_; }  // the file named
  std::error_code code() const { return code_; }     // the operating system's reason; empty when none

 private:
  std::string path_;
  std::error_code code_;
};

// The GPU did not cool down to the resume threshold within thermal_timeout_s.
class ThermalError : public Error {
 public:
  using Error::Error;
};

// Raised by profile() when a config fails. what() names the config and the cause; the cause itself
// (the user's exception, an AnnotationError, ...) is kept, and so are the results gathered so far.
class SweepError : public Error {
 public:
  // Made by the engine: the message, the failed config ("n=4"), the original exception and the
  // results of the configs measured before it.
  SweepError(const std::string& message, std::string failed_config, std::exception_ptr cause,
             std::shared_ptr<const Results> partial);
  const std::string& failed_config() const { return failed_config_; }  // "n=4"
  std::exception_ptr cause() const { return cause_; }  // the original exception: rethrow it to inspect it
  // Every row measured before the failure (also written under Settings::output_prefix when set).
  const Results& partial_results() const { return *partial_; }

 private:
  std::string failed_config_;
  std::exception_ptr cause_;
  std::shared_ptr<const Results> partial_;
};

// Raised by profile() when the sweep was interrupted (Ctrl-C, SIGINT): the sweep stopped at the end
// of the run in progress, clocks are restored, and what was measured is kept here (and written to
// Settings::output_prefix when set; resume with Settings::resume). Deliberately not a kscope::Error:
// an interrupt is the user's request, not a problem of the profile, so code that catches
// kscope::Error to skip a failed sweep and carry on does not swallow Ctrl-C (as Python's
// kscope.SweepInterrupted is a KeyboardInterrupt, not an Exception).
class SweepInterrupted : public std::runtime_error {
 public:
  // Made by the engine: the message, the config in progress and what was measured.
  SweepInterrupted(const std::string& message, std::string interrupted_config, std::shared_ptr<const Results> partial);
  // The config that was being measured ("n=4"); empty when the sweep was between configs.
  const std::string& interrupted_config() const { return interrupted_config_; }
  const Results& partial_results() const { return *partial_; }  // every run measured before the interrupt

 private:
  std::string interrupted_config_;
  std::shared_ptr<const Results> partial_;
};

}  // namespace kscope

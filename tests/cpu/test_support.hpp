#pragma once
// Helpers shared by the CPU tests: the message of an expected error, and a scratch directory.
#include <stdlib.h>

#include <filesystem>
#include <string>

#include "kscope/errors.hpp"

namespace kscope_test {

// The message of the `Expected` exception `f` throws; a text saying none came otherwise.
template <typename Expected = kscope::ConfigError, typename F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const Expected& e) {
    return e.what();
  }
  return "(no expected exception)";
}

// A fresh directory under /tmp, removed with everything in it at the end of the scope.
class TempDir {
 public:
  TempDir() {
    char pattern[] = "/tmp/kscope_test_XXXXXX";
    path_ = mkdtemp(pattern);
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  // A path (or file prefix) inside it.
  std::string prefix(const std::string& name = "sweep_") const { return (std::filesystem::path(path_) / name).string(); }

 private:
  std::string path_;
};

}  // namespace kscope_test

#pragma once
// A dlopen handle, closed on destruction. The doctor reaches the driver, NVML and CUPTI this way
// so that it runs, and says what is missing, on machines where they are absent.
#include <dlfcn.h>

#include <string>

namespace kscope::doctor {

class SharedLibrary {
 public:
  SharedLibrary(const char* name, int flags) : handle_(dlopen(name, flags)) {
    if (handle_ == nullptr) {
      const char* why = dlerror();
      error_ = why ? why : "unknown dlopen error";
    }
  }
  ~SharedLibrary() {
    if (handle_ != nullptr) dlclose(handle_);
  }
  SharedLibrary(const SharedLibrary&) = delete;
  SharedLibrary& operator=(const SharedLibrary&) = delete;

  explicit operator bool() const { return handle_ != nullptr; }
  const std::string& error() const { return error_; }  // why dlopen failed

  // nullptr when absent.
  template <typename Fn>
  Fn symbol(const char* name) const {
    return handle_ ? reinterpret_cast<Fn>(dlsym(handle_, name)) : nullptr;
  }

 private:
  void* handle_;
  std::string error_;
};

}  // namespace kscope::doctor

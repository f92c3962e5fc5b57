#pragma once
// Kernel names as every backend reports them: demangled C++ names, extern "C" (Triton, CuPy RawKernel)
// names unchanged. CUPTI hands out mangled names, and ncu's own printing drops namespaces, so each
// backend demangles here to give one name per kernel across backends.
#include <string>
#include <unordered_map>

namespace kscope {

std::string demangle(const std::string& symbol);

// demangle() cached per symbol: the same few kernels repeat on every run.
class KernelNames {
 public:
  const std::string& of(const std::string& symbol);

 private:
  std::unordered_map<std::string, std::string> known_;
};

}  // namespace kscope

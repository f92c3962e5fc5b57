#include "core/model/kernel_names.hpp"

#include <cxxabi.h>

#include <cstdlib>
#include <memory>

namespace kscope {

std::string demangle(const std::string& symbol) {
  int status = 0;
  std::unique_ptr<char, decltype(&std::free)> text(abi::__cxa_demangle(symbol.c_str(), nullptr, nullptr, &status),
                                                   &std::free);
  return status == 0 && text ? std::string(text.get()) : symbol;
}

const std::string& KernelNames::of(const std::string& symbol) {
  auto known = known_.find(symbol);
  if (known != known_.end()) return known->second;
  return known_.emplace(symbol, demangle(symbol)).first->second;
}

}  // namespace kscope

#include "cupti/kernel_names.h"

#include <cxxabi.h>

#include <cstdlib>
#include <memory>

namespace gpunoise::cupti {

const std::string& KernelNames::Demangled(const char* mangled) {
  std::string key = mangled ? mangled : "";
  auto it = cache_.find(key);
  if (it != cache_.end()) return it->second;
  // A process that generates kernels at run time (JIT) could grow the cache
  // without bound; start over rather than keep every name forever.
  if (cache_.size() >= kMaxCached) cache_.clear();
  std::string demangled = key.empty() ? std::string("(unnamed kernel)") : key;
  if (!key.empty()) {
    int status = 0;
    std::unique_ptr<char, decltype(&std::free)> out(
        abi::__cxa_demangle(key.c_str(), nullptr, nullptr, &status), &std::free);
    if (status == 0 && out) demangled = out.get();
  }
  return cache_.emplace(std::move(key), std::move(demangled)).first->second;
}

}  // namespace gpunoise::cupti

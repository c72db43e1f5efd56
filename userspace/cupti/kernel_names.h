// Demangled kernel names, cached: a training step launches the same few
// hundred kernels over and over, and demangling a templated name costs
// microseconds.
#pragma once

#include <string>
#include <string_view>
#include <unordered_map>

namespace gpunoise::cupti {

class KernelNames {
 public:
  // "_Z6scaleIfEvPT_S0_i" -> "void scale<float>(float*, float, int)";
  // names that are not mangled come back unchanged.
  const std::string& Demangled(const char* mangled);

 private:
  static constexpr size_t kMaxCached = 1 << 14;
  std::unordered_map<std::string, std::string> cache_;
};

}  // namespace gpunoise::cupti

// Kernel command lines (/proc/cmdline) as doctor reads them: parameters,
// isolcpus' flags, and the CPU lists of the isolation parameters (with the
// kernel's "N" for the last CPU), plus the CPU list and mask parsers every
// sysfs CPU file goes through.
#include <fuzzer/FuzzedDataProvider.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "common/cpu_list.h"
#include "doctor/kernel_cmdline.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider in(data, size);
  int last_cpu = in.ConsumeIntegralInRange(-1, 4096);
  std::string text = in.ConsumeRemainingBytesAsString();
  gpunoise::doctor::KernelCmdline cmdline = gpunoise::doctor::ParseKernelCmdline(text);
  for (const char* key : {"isolcpus", "nohz_full", "rcu_nocbs", "irqaffinity", "quiet"})
    (void)cmdline.CpuList(key, last_cpu);
  (void)cmdline.IsolcpusFlags();
  (void)gpunoise::ParseCpuList(text);
  (void)gpunoise::ParseCpuMask(text);
  return 0;
}

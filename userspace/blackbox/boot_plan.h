// The kernel command line that gives a node a black box, by kernel version
// and memory size (Documentation/trace/debugging.rst "Persistent buffers
// across boots"; Documentation/admin-guide/kernel-parameters.txt
// reserve_mem=nn[KMG]:<align>:<label>, trace_instance=NAME^FLAG@LABEL and
// crashkernel=). Pure: the printed lines are unit-tested.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpunoise::blackbox {

struct KernelVersion {
  int major = 0, minor = 0, patch = 0;
  bool AtLeast(int ma, int mi) const { return major > ma || (major == ma && minor >= mi); }
};
// "6.18.44-fc-v769", "5.14.0-427.el9.x86_64" -> {6,18,44}, {5,14,0}.
std::optional<KernelVersion> ParseKernelRelease(std::string_view release);

struct BootPlanOptions {
  std::string instance = "gpunoise_blackbox";
  std::string label = "gpunoise";  // reserve_mem label: RESERVE_MEM_NAME_SIZE is 16 with the NUL
  uint64_t size_bytes = 0;         // 0: sized from CPUs and memory
};

enum class BlackBoxKind {
  kPersistentBuffer,  // 6.12+: reserve_mem + trace_instance@label
  kKdump,             // older: the buffers are in a kdump vmcore (crash's trace extension)
};

struct BootPlan {
  BlackBoxKind kind = BlackBoxKind::kPersistentBuffer;
  std::string cmdline;            // the parameters to add
  uint64_t size_bytes = 0;        // memory the buffer takes (kdump: the crash kernel's)
  uint64_t per_cpu_bytes = 0;     // the ring each CPU gets (persistent buffer)
  std::vector<std::string> notes; // what this kernel can and cannot keep
};

// `mem_bytes`: MemTotal; `cpus`: possible CPUs.
BootPlan PlanBootCommandLine(const KernelVersion& kernel, uint64_t mem_bytes, uint32_t cpus,
                             const BootPlanOptions& options = {});

// The buffer size chosen when none is given: 2 MiB per CPU, at least
// 32 MiB, at most 1/128 of memory and 1 GiB, in whole MiB.
uint64_t DefaultBufferBytes(uint64_t mem_bytes, uint32_t cpus);

// "64M", "1G", "512K": the largest unit that divides the size.
std::string KernelSize(uint64_t bytes);

// A GRUB drop-in (/etc/default/grub.d/*.cfg, sourced after
// /etc/default/grub) that appends `cmdline` to GRUB_CMDLINE_LINUX.
std::string GrubDropIn(const std::string& cmdline);

// True when `proc_cmdline` already carries every parameter of `cmdline`.
bool CommandLineHas(std::string_view proc_cmdline, std::string_view cmdline);

}  // namespace gpunoise::blackbox

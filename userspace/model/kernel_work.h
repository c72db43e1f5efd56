// Kernel work on a CPU that is no task of its own: IPI callbacks, work
// items and hrtimer callbacks, and the function-call IPIs sent (bpf/kwork.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace gpunoise::model {

enum class KernelWorkKind : uint8_t { kIpiSend = 0, kIpiCallback = 1, kWorkItem = 2, kHrtimer = 3 };
// "ipi send", "ipi callback", "work item", "hrtimer": the slice names'
// first words on the trace's kernel-work tracks.
std::string_view KernelWorkName(KernelWorkKind kind);
std::optional<KernelWorkKind> KernelWorkKindFromName(std::string_view name);

// Where an IPI send was made: a send from an interrupt is the interrupt's.
enum class KernelWorkContext : uint8_t { kTask = 0, kHardirq = 1, kSoftirq = 2 };

struct KernelWork {
  uint64_t begin = 0, end = 0;  // CLOCK_BOOTTIME; equal for an IPI send
  uint64_t func = 0;            // kernel text address (callback, work function, hrtimer function)
  uint64_t callsite = 0;        // IPI send: who asked for it
  uint64_t targets = 0;         // IPI send: CPUs 0..63 (bit 63 also stands for higher ones)
  uint64_t csd = 0;             // IPI send and callback: the request's call_single_data (pairs the two)
  int32_t tid = 0;              // current task: sender, kworker, or the task interrupted
  int32_t tgid = 0;             // its process, as the kernel knew it then (0: unknown)
  uint32_t cpu = 0;
  KernelWorkKind kind = KernelWorkKind::kIpiSend;
  KernelWorkContext context = KernelWorkContext::kTask;  // IPI send only
};

}  // namespace gpunoise::model

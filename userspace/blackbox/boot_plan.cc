#include "blackbox/boot_plan.h"

#include <algorithm>
#include <charconv>

#include <fmt/format.h>

#include "common/strings.h"

namespace gpunoise::blackbox {
namespace {

constexpr uint64_t kMiB = 1ull << 20;
constexpr uint64_t kGiB = 1ull << 30;

std::optional<int> Number(std::string_view s, size_t* pos) {
  int v = 0;
  auto [p, ec] = std::from_chars(s.data() + *pos, s.data() + s.size(), v);
  if (ec != std::errc()) return std::nullopt;
  *pos = static_cast<size_t>(p - s.data());
  return v;
}

}  // namespace

std::optional<KernelVersion> ParseKernelRelease(std::string_view release) {
  KernelVersion v;
  size_t pos = 0;
  auto major = Number(release, &pos);
  if (!major || pos >= release.size() || release[pos] != '.') return std::nullopt;
  ++pos;
  auto minor = Number(release, &pos);
  if (!minor) return std::nullopt;
  v.major = *major;
  v.minor = *minor;
  if (pos < release.size() && release[pos] == '.') {
    ++pos;
    if (auto patch = Number(release, &pos)) v.patch = *patch;
  }
  return v;
}

uint64_t DefaultBufferBytes(uint64_t mem_bytes, uint32_t cpus) {
  uint64_t want = std::max<uint64_t>(uint64_t{cpus} * 2 * kMiB, 32 * kMiB);
  uint64_t cap = std::min<uint64_t>(mem_bytes / 128, kGiB);
  uint64_t size = std::min(want, cap);
  size = size / kMiB * kMiB;
  return std::max<uint64_t>(size, 4 * kMiB);
}

std::string KernelSize(uint64_t bytes) {
  if (bytes && bytes % kGiB == 0) return fmt::format("{}G", bytes / kGiB);
  if (bytes && bytes % kMiB == 0) return fmt::format("{}M", bytes / kMiB);
  if (bytes && bytes % 1024 == 0) return fmt::format("{}K", bytes / 1024);
  return std::to_string(bytes);
}

BootPlan PlanBootCommandLine(const KernelVersion& kernel, uint64_t mem_bytes, uint32_t cpus,
                             const BootPlanOptions& options) {
  BootPlan plan;
  cpus = std::max<uint32_t>(cpus, 1);
  if (!kernel.AtLeast(6, 12)) {
    // No persistent ring buffer before 6.12 (debugging.rst is "written for
    // 6.12"). What survives a crash there is a kdump vmcore: the crash
    // kernel's reservation, by the documented range syntax, and the ring
    // buffers are in the dump (crash's trace extension writes trace.dat).
    plan.kind = BlackBoxKind::kKdump;
    plan.cmdline = "crashkernel=1G-4G:192M,4G-64G:256M,64G-:512M";
    uint64_t gib = mem_bytes / kGiB;
    plan.size_bytes = gib < 4 ? 192 * kMiB : gib < 64 ? 256 * kMiB : 512 * kMiB;
    plan.notes.push_back(fmt::format(
        "Linux {}.{} has no persistent trace buffer (6.12+): the black box there is a kdump vmcore "
        "(install kdump-tools or kexec-tools, set panic_on_oops=1), read with crash's trace "
        "extension (docs/blackbox.md)",
        kernel.major, kernel.minor));
    return plan;
  }
  plan.kind = BlackBoxKind::kPersistentBuffer;
  plan.size_bytes = options.size_bytes ? options.size_bytes : DefaultBufferBytes(mem_bytes, cpus);
  // reserve_mem needs a page-aligned size (debugging.rst, "NB"); a larger
  // alignment keeps KASLR from moving the reservation between boots.
  plan.size_bytes = std::max<uint64_t>(plan.size_bytes / 4096 * 4096, 4096);
  uint64_t align = plan.size_bytes >= 32 * kMiB ? 32 * kMiB : 2 * kMiB;
  plan.per_cpu_bytes = plan.size_bytes / cpus;
  // ^traceoff: the previous boot's data is not mixed with this boot's until
  // `blackbox collect` has read it and `blackbox arm` turns tracing on.
  plan.cmdline = fmt::format("reserve_mem={}:{}:{} trace_instance={}^traceoff@{}", KernelSize(plan.size_bytes),
                             KernelSize(align), options.label, options.instance, options.label);
  if (!kernel.AtLeast(6, 14))
    plan.notes.push_back(
        "before 6.14 last_boot_info has the kernel's KASLR offset only: addresses in modules (NIC "
        "drivers) of the previous boot are not symbolized");
  if (plan.per_cpu_bytes < kMiB)
    plan.notes.push_back(fmt::format("{} per CPU is small: at a NIC's interrupt rate it holds well under "
                                     "a second (--size to reserve more)",
                                     KernelSize(plan.per_cpu_bytes / 1024 * 1024)));
  plan.notes.push_back(
      "a warm reboot or kexec keeps the buffer; a power cycle (BMC) does not; booting a different "
      "kernel makes the kernel wipe it");
  return plan;
}

std::string GrubDropIn(const std::string& cmdline) {
  return fmt::format(
      "# Written by 'gpunoise blackbox arm --install': reserves memory for a trace buffer that\n"
      "# survives a warm reboot (docs/blackbox.md). Remove this file and update the GRUB\n"
      "# configuration to undo it.\n"
      "GRUB_CMDLINE_LINUX=\"${{GRUB_CMDLINE_LINUX}} {}\"\n",
      cmdline);
}

bool CommandLineHas(std::string_view proc_cmdline, std::string_view cmdline) {
  std::vector<std::string_view> have = Split(Trim(proc_cmdline), ' ');
  for (std::string_view want : Split(Trim(cmdline), ' ')) {
    if (want.empty()) continue;
    if (std::find(have.begin(), have.end(), want) == have.end()) return false;
  }
  return true;
}

}  // namespace gpunoise::blackbox

// The instance's last_boot_info (Linux 6.12+, persistent instances only):
// where the previous boot's kernel text and modules were, so addresses in
// its records can be mapped to this boot's symbols.
//   "# Current"                            the buffer holds this boot's data
//   "trace_clock: boot"                    (6.15+) the clock the data is on
//   "ffffffff9a000000\t[kernel]"           6.14+: the previous _text address;
//   "3c000000\t[kernel]"                   6.12/6.13: the KASLR offset
//   "ffffffffc0a00000\tmlx5_core"          (6.14+) a module's base address
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "common/result.h"

namespace gpunoise::blackbox {

struct LastBootInfo {
  bool current = false;  // "# Current": no previous boot's data
  std::string trace_clock;  // empty when the kernel does not say
  // What the [kernel] line held; one of the two.
  std::optional<uint64_t> text_address;  // 6.14+
  std::optional<uint64_t> kaslr_offset;  // 6.12, 6.13
  std::map<std::string, uint64_t> modules;  // name -> base address
};

Result<LastBootInfo> ParseLastBootInfo(std::string_view text);

// How far this boot's kernel text moved from the previous boot's: add it to
// a previous-boot kernel address to get the address of the same code now.
// `current_text` is this boot's _text (kallsyms). A 6.12/6.13 offset is
// turned into the previous _text with x86-64's link address of _text
// (0xffffffff81000000, __START_KERNEL with the default PHYSICAL_START);
// nullopt where that does not hold (other architectures) or nothing is known.
std::optional<int64_t> KernelTextDelta(const LastBootInfo& info, uint64_t current_text);
inline constexpr uint64_t kX86TextLinkAddress = 0xffffffff81000000ull;

}  // namespace gpunoise::blackbox

#include "blackbox/last_boot_info.h"

#include <charconv>

#include "common/strings.h"

namespace gpunoise::blackbox {
namespace {

std::optional<uint64_t> ParseHex(std::string_view s) {
  if (StartsWith(s, "0x")) s.remove_prefix(2);
  uint64_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v, 16);
  if (ec != std::errc() || p != s.data() + s.size() || s.empty()) return std::nullopt;
  return v;
}

}  // namespace

Result<LastBootInfo> ParseLastBootInfo(std::string_view text) {
  LastBootInfo info;
  bool any = false;
  for (std::string_view line : Split(text, '\n')) {
    line = Trim(line);
    if (line.empty()) continue;
    any = true;
    if (line == "# Current") {
      info.current = true;
      continue;
    }
    if (StartsWith(line, "trace_clock:")) {
      info.trace_clock = std::string(Trim(line.substr(12)));
      continue;
    }
    auto sep = line.find_first_of(" \t");
    if (sep == line.npos) return MakeError("unexpected last_boot_info line '{}'", line);
    auto address = ParseHex(line.substr(0, sep));
    std::string_view name = Trim(line.substr(sep + 1));
    if (!address || name.empty()) return MakeError("unexpected last_boot_info line '{}'", line);
    if (name == "[kernel]") {
      // 6.12 printed kaslr_offset(); 6.14 changed it to _text's address
      // (kernel/trace/trace.c show_last_boot_header). Kernel addresses are
      // in the upper half, an offset never is.
      if (*address >= (1ull << 63)) info.text_address = *address;
      else info.kaslr_offset = *address;
    } else {
      info.modules[std::string(name)] = *address;
    }
  }
  if (!any) return MakeError("last_boot_info is empty");
  if (!info.current && !info.text_address && !info.kaslr_offset)
    return MakeError("last_boot_info names no previous kernel ([kernel] line missing)");
  return info;
}

std::optional<int64_t> KernelTextDelta(const LastBootInfo& info, uint64_t current_text) {
  if (info.current || current_text == 0) return std::nullopt;
  uint64_t previous;
  if (info.text_address) {
    previous = *info.text_address;
  } else {
#if defined(__x86_64__)
    previous = kX86TextLinkAddress + *info.kaslr_offset;
#else
    return std::nullopt;
#endif
  }
  return static_cast<int64_t>(current_text - previous);
}

}  // namespace gpunoise::blackbox

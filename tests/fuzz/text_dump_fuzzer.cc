// `gpunoise blackbox import-text FILE`: an ftrace_dump_on_oops console
// capture or a tracefs `trace` file, kept by a serial console, netconsole or
// pstore and read as root. Whatever the text, the parser either refuses it
// with one line or gives events whose counts agree with themselves.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "blackbox/text_dump.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace gpunoise::blackbox;
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto dump = ParseTextDump(text);
  if (!dump.ok()) {
    // The refusal is one line.
    if (dump.error().message.find('\n') != std::string::npos) __builtin_trap();
    return 0;
  }
  uint64_t events = 0;
  for (const auto& [cpu, list] : dump->events) events += list.size();
  // Every event came from an event line, and the first is not after the last.
  if (events > dump->lines) __builtin_trap();
  if (dump->lines && dump->first_ts > dump->last_ts) __builtin_trap();
  for (const auto& [cpu, indices] : dump->loss_at)
    for (size_t i : indices)
      if (i > dump->events[cpu].size()) __builtin_trap();
  return 0;
}

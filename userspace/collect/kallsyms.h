// Kernel text addresses to "function+0xoffset", from /proc/kallsyms (as
// root; others see zero addresses and get hex back). Used to name the code
// location of a packet drop.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace gpunoise::collect {

class KernelSymbols {
 public:
  // Reads `path` once; an unreadable file gives an empty table.
  static KernelSymbols Load(const std::string& path = "/proc/kallsyms");
  // Reads an already open /proc/kallsyms. The kernel decides whether to show
  // addresses from the credentials of whoever opened it, so a recorder that
  // drops its capabilities after attaching opens it before and reads it at
  // the end.
  static KernelSymbols LoadFromFd(int fd);
  static KernelSymbols FromTextForTesting(const std::string& text);

  // "udp_queue_rcv_one_skb+0x3c", or "0xffffffff81234567" when unknown.
  std::string Symbolize(uint64_t address) const;
  bool empty() const { return symbols_.empty(); }

 private:
  struct Symbol {
    uint64_t address;
    std::string name;
  };
  void Parse(std::string_view text);
  std::vector<Symbol> symbols_;  // sorted by address
};

}  // namespace gpunoise::collect

#include "collect/kallsyms.h"

#include <unistd.h>

#include <cerrno>

#include <fmt/format.h>

#include <algorithm>
#include <charconv>

#include "common/files.h"
#include "common/strings.h"

namespace gpunoise::collect {

KernelSymbols KernelSymbols::Load(const std::string& path) {
  KernelSymbols out;
  if (auto text = ReadFileToString(path); text.ok()) out.Parse(*text);
  return out;
}

KernelSymbols KernelSymbols::LoadFromFd(int fd) {
  KernelSymbols out;
  if (fd < 0) return out;
  std::string text;
  char buf[1 << 16];
  off_t offset = 0;
  for (;;) {
    ssize_t n = ::pread(fd, buf, sizeof(buf), offset);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    text.append(buf, static_cast<size_t>(n));
    offset += n;
  }
  out.Parse(text);
  return out;
}

KernelSymbols KernelSymbols::FromTextForTesting(const std::string& text) {
  KernelSymbols out;
  out.Parse(text);
  return out;
}

// "ffffffff81234560 T udp_queue_rcv_one_skb\t[module]". Scanned in place:
// 120k lines, and a split per line was half the load's time.
void KernelSymbols::Parse(std::string_view text) {
  while (!text.empty()) {
    size_t eol = text.find('\n');
    std::string_view line = Trim(text.substr(0, eol));
    text = eol == std::string_view::npos ? std::string_view() : text.substr(eol + 1);
    uint64_t address = 0;
    auto r = std::from_chars(line.data(), line.data() + line.size(), address, 16);
    if (r.ec != std::errc() || address == 0) continue;
    std::string_view rest = line.substr(static_cast<size_t>(r.ptr - line.data()));
    if (rest.size() < 4 || rest[0] != ' ' || (rest[1] != 't' && rest[1] != 'T') || rest[2] != ' ') continue;  // code only
    std::string_view name = rest.substr(3);
    name = name.substr(0, name.find_first_of("\t "));
    if (!name.empty()) symbols_.push_back({address, std::string(name)});
  }
  std::sort(symbols_.begin(), symbols_.end(),
            [](const Symbol& a, const Symbol& b) { return a.address < b.address; });
}

std::string KernelSymbols::Symbolize(uint64_t address) const {
  auto it = std::upper_bound(symbols_.begin(), symbols_.end(), address,
                             [](uint64_t a, const Symbol& s) { return a < s.address; });
  if (it == symbols_.begin() || address == 0) return fmt::format("{:#x}", address);
  --it;
  uint64_t offset = address - it->address;
  // Beyond 1 MiB from the nearest symbol the answer would be a guess.
  if (offset > (1u << 20)) return fmt::format("{:#x}", address);
  return offset ? fmt::format("{}+{:#x}", it->name, offset) : it->name;
}

}  // namespace gpunoise::collect
